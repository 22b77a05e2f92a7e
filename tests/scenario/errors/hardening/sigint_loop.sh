#!/bin/sh
# sigint_loop.sh FAULTLINE SCENARIO DB [SIGNAL]: a script spinning in Lua honours the
# first SIGINT (or SIGTERM, or SIGHUP: a closed terminal or ssh session) at once:
# exit 3, "interrupted", the run 'error' with the signal's name in runs.reason
# (ctest's timeout catches an ignored signal).
bin=$1; scn=$2; db=$3; sig=${4:-INT}
rm -f "$db" "$db-wal" "$db-shm"
err=$(mktemp)
"$bin" run "$scn" --db "$db" --timeout 600 2>"$err" >/dev/null &
pid=$!
sleep 2
kill -"$sig" $pid
wait $pid; rc=$?
cat "$err"
grep -q "interrupted" "$err" || { echo "no 'interrupted' on stderr"; rm -f "$err"; exit 1; }
rm -f "$err"
[ "$rc" = 3 ] || { echo "exit $rc, want 3"; exit 1; }
v=$(sqlite3 "$db" "select verdict || '|' || reason from runs")
[ "$v" = "error|interrupted by SIG$sig" ] || { echo "runs row '$v', want 'error|interrupted by SIG$sig'"; exit 1; }
exit 0
