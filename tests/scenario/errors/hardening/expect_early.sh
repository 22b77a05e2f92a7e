#!/bin/sh
# expect_early.sh FAULTLINE SCENARIO DB: a run that stops early (script error) reports
# its expect check 'unknown' with a reason, and the run 'error' (exit 2).
bin=$1; scn=$2; db=$3
rm -f "$db" "$db-wal" "$db-shm"
out=$("$bin" run "$scn" --db "$db" --json 2>/dev/null); rc=$?
[ "$rc" = 2 ] || { echo "exit $rc, want 2"; exit 1; }
printf '%s' "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
e = s["checks"]["expect"]
assert s["verdict"] == "error", s["verdict"]
assert e["verdict"] == "unknown", e
assert "stopped before its end" in e["reason"], e
assert e["total"] == 1 and e["failed"] == 0, e
print("expect:", e["verdict"], "-", e["reason"])
'
