#!/usr/bin/env python3
"""verdict_check.py RC CHECK CMD...: runs CMD (a `faultline run ... --json`) and requires
exit code RC and stdout one JSON object; unless CHECK is "-", also that check's verdict:
"fail" for RC 1, "pass" otherwise. The one verdict script of the scenario tests
(tests/CMakeLists.txt: fl_seed_scenarios, fl_bug_scenarios)."""
import json
import subprocess
import sys

want, check, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
try:
    o = json.loads(p.stdout)
except ValueError:
    print("stdout is not one JSON object:", p.stdout[:400], p.stderr[-2000:])
    sys.exit(1)
got = {k: v.get("verdict") for k, v in o["checks"].items()}
print("exit", p.returncode, "want", want, "check", check, "checks", got)
want_v = "fail" if want == 1 else "pass"
if p.returncode != want or (check != "-" and got.get(check) != want_v):
    print(p.stderr[-3000:])
    sys.exit(1)
