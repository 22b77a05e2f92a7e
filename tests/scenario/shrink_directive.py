#!/usr/bin/env python3
"""shrink_directive.py FAULTLINE SCENARIO DB: runs tests/scenario/shrink/directive.lua
and checks from its --json summary that every field of shrink{} was honoured."""
import json, subprocess, sys

bin_, scn, db = sys.argv[1:4]
p = subprocess.run([bin_, "run", scn, "--seed", "1", "--db", db, "--json"],
                   capture_output=True, text=True, timeout=120)
s = json.loads(p.stdout)
errors = []
def want(cond, what):
    if not cond:
        errors.append(what)
want(p.returncode == 0, "exit %d, want 0: %s" % (p.returncode, p.stderr))
sh = s.get("shrink", {})
want(sh.get("skip_faults") == [2, 4], "shrink.skip_faults: %r" % sh.get("skip_faults"))
want(sh.get("end_at_ms") == 2500 and sh.get("cut_at_ms") == 2500, "end_at/cut_at: %r" % sh)
want(sh.get("time_scale") == 50, "time_scale: %r" % sh)
want(s["script_end_ms"] == 2500, "script_end_ms %r, want 2500" % s["script_end_ms"])
want(s["workload"] == {"clients": 1, "keys": 2, "rate": 20, "watchers": 0, "nodes": 5},
     "workload: %r" % s["workload"])
want(len(s["clients"]) == 1, "clients: %d" % len(s["clients"]))
want(s.get("shrink", {}).get("nodes") == 5, "shrink.nodes: %r" % sh)
ords = [f.get("ordinal") for f in s["faults"]]
want(2 not in ords and 4 not in ords, "skipped ordinals recorded: %r" % ords)
want(ords[:3] == [1, 3, 5], "ordinals %r, want 1, 3, 5 first" % ords)
want(all(o is None or o >= 5 for o in ords[3:]), "nemesis ordinals: %r" % ords)
want(s["fault_ordinals"] >= 6, "fault_ordinals %r" % s["fault_ordinals"])
kinds = [f["kind"] for f in s["faults"]]
want(kinds[:3] == ["pause", "resume", "nemesis"], "kinds %r" % kinds)
items = s["checks"]["expect"]["items"]
want(len(items) == 1 and items[0]["verdict"] == "pass", "expects: %r" % items)
# the nemesis (every 200 ms from 1 s, cut at 2.5 s): its draws and undos share ordinals
nem = [f for f in s["faults"][3:] if "ordinal" in f]
want(len(nem) >= 2, "nemesis drew nothing: %r" % s["faults"])
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
