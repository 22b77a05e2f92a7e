#!/bin/sh
# sigint_loop.sh FAULTLINE SCENARIO DB: a script spinning in Lua honours the first
# SIGINT at once: exit 3, "interrupted", the run 'error' (ctest's timeout catches an
# ignored signal).
bin=$1; scn=$2; db=$3
rm -f "$db" "$db-wal" "$db-shm"
err=$(mktemp)
"$bin" run "$scn" --db "$db" --timeout 600 2>"$err" >/dev/null &
pid=$!
sleep 2
kill -INT $pid
wait $pid; rc=$?
cat "$err"
grep -q "interrupted" "$err" || { echo "no 'interrupted' on stderr"; rm -f "$err"; exit 1; }
rm -f "$err"
[ "$rc" = 3 ] || { echo "exit $rc, want 3"; exit 1; }
v=$(sqlite3 "$db" "select verdict from runs")
[ "$v" = error ] || { echo "runs.verdict '$v', want error"; exit 1; }
exit 0
