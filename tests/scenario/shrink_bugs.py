#!/usr/bin/env python3
"""shrink_bugs.py FAULTLINE REPO DIR [SEED]: for every bug switch of `faultline list bugs`
whose scenario exists under REPO/scenarios/bugs/, if that scenario fails with --bug at
SEED (default 1), shrinks it with shrink_check.py (the result must replay, fail the
same check and be smaller; a shrinker that finds nothing smaller, exit 1, is reported
but accepted: some bug scenarios are minimal already). Exit 77 (skipped) while no bug
scenario exists yet."""
import json, os, subprocess, sys

bin_, repo, d = sys.argv[1:4]
seed = sys.argv[4] if len(sys.argv) > 4 else "1"
here = os.path.dirname(os.path.abspath(__file__))
rows = subprocess.run([bin_, "list", "bugs"], capture_output=True, text=True).stdout.splitlines()
done = 0
failed = []
for row in rows:
    parts = row.split("  ")
    if len(parts) < 2:
        continue
    name, scn = parts[0], os.path.join(repo, parts[1])
    if not os.path.exists(scn):
        continue
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "bugs.db")
    p = subprocess.run([bin_, "run", scn, "--seed", seed, "--bug", name, "--db", db, "--json"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 1:
        print("%s: %s does not fail at seed %s (exit %d); not shrunk" % (name, scn, seed, p.returncode))
        continue
    s = json.loads(p.stdout)
    check = next(c for c in ("linearizability", "watch", "raft_safety", "converge", "expect")
                 if s["checks"].get(c, {}).get("verdict") == "fail")
    if s.get("script_end_ms", 1) == 0 and not s.get("fault_ordinals"):
        # caught at the run's first instant (an online check at boot): nothing to shrink
        print("%s: fails %s at 0 ms without a fault (accepted: minimal)" % (name, check))
        done += 1
        continue
    q = subprocess.run([bin_, "shrink", scn, "--seed", seed, "--bug", name, "--quiet",
                        "-o", os.path.join(d, name + ".lua")], capture_output=True, text=True,
                       timeout=900)
    if q.returncode == 1:
        print("%s: nothing smaller fails %s (accepted)" % (name, check))
        done += 1
        continue
    r = subprocess.run([sys.executable, os.path.join(here, "shrink_check.py"), bin_,
                        os.path.join(d, name), scn, seed, check, "--bug", name],
                       capture_output=True, text=True, timeout=900)
    print("%s (%s): %s" % (name, check, r.stdout.strip().replace("\n", "; ")))
    if r.returncode != 0:
        failed.append(name)
    done += 1
if done == 0:
    print("no bug scenario fails yet; skipped")
    sys.exit(77)
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
