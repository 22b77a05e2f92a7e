#!/bin/sh
# expect_continues.sh FAULTLINE SCENARIO DB: a failed expect makes the verdict 'fail'
# and the run goes on (the later expect is recorded too).
"$1" run "$2" --db "$3" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["checks"]["expect"]
assert d["verdict"] == "fail", d["verdict"]
assert e["total"] == 2 and e["failed"] == 1, e
'
