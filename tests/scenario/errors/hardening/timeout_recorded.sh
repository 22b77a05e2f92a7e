#!/bin/sh
# timeout_recorded.sh FAULTLINE SCENARIO DB: with --timeout 1 the run ends by itself
# (ctest's own timeout catches a hang) with exit 3, one JSON object whose verdict is
# 'error' and whose "error" names the timeout and the scenario line, a runs row that is
# 'error' (with the reason, where the schema has the column), and a history that
# `faultline check` can open.
bin=$1; scn=$2; db=$3
rm -f "$db" "$db-wal" "$db-shm"
out=$("$bin" run "$scn" --db "$db" --json --timeout 1 2>/dev/null); rc=$?
[ "$rc" = 3 ] || { echo "exit $rc, want 3"; exit 1; }
printf '%s' "$out" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["verdict"] == "error", o["verdict"]
assert "timeout: the run took more than 1 s" in o["error"], o["error"]
print("summary:", o["error"])
' || exit 1
v=$(sqlite3 "$db" "select verdict from runs")
[ "$v" = error ] || { echo "runs.verdict '$v', want error"; exit 1; }
if sqlite3 "$db" "select reason from runs" >/dev/null 2>&1; then
  r=$(sqlite3 "$db" "select reason from runs")
  case "$r" in *timeout*) ;; *) echo "runs.reason '$r' does not name the timeout"; exit 1;; esac
fi
sqlite3 "$db" "pragma integrity_check" | grep -qx ok || { echo "integrity_check failed"; exit 1; }
exit 0
