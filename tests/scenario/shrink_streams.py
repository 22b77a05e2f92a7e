#!/usr/bin/env python3
"""shrink_streams.py FAULTLINE SCENARIO DIR: the fault stream is separate from the
workload streams. Runs SCENARIO (seed 3) as is and with every fault skipped through a
shrink{} directive; each client's sequence of workload operations (kind, key, value
written) must be the same in both runs for as many operations as both made, and the
runs must differ in their faults (so the test is not vacuous)."""
import json, os, sqlite3, subprocess, sys

bin_, scn, d = sys.argv[1:4]
os.makedirs(d, exist_ok=True)

def run(path, db):
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(db + sfx):
            os.unlink(db + sfx)
    p = subprocess.run([bin_, "run", path, "--seed", "3", "--db", db, "--json"],
                       capture_output=True, text=True, timeout=300)
    s = json.loads(p.stdout)
    con = sqlite3.connect(db)
    seqs = {}
    for cid, kind, key, value in con.execute(
            "SELECT client_id, kind, key, value FROM ops "
            "ORDER BY client_id, op_id"):
        # a get's value is what it read, which faults may change; a put's is the draw
        seqs.setdefault(cid, []).append((kind, key, value if kind == "put" else None))
    con.close()
    return s, seqs

plain, a = run(scn, os.path.join(d, "plain.db"))
n = plain["fault_ordinals"]
text = open(scn).read()
skipped_path = os.path.join(d, "skipped.lua")
with open(skipped_path, "w") as f:
    f.write("shrink{ skip_faults = {%s} }; " % ", ".join(str(i) for i in range(1, n + 1)) + text)
skipped, b = run(skipped_path, os.path.join(d, "skipped.db"))
errors = []
ordinal_faults = lambda s: [f for f in s["faults"] if "ordinal" in f]
if len(ordinal_faults(plain)) < 4:
    errors.append("the plain run has too few faults: %r" % plain["faults"])
if ordinal_faults(skipped):
    errors.append("the skipped run still records faults: %r" % ordinal_faults(skipped))
if sorted(a) != sorted(b) or len(a) != 3:
    errors.append("clients differ: %r vs %r" % (sorted(a), sorted(b)))
compared = 0
for cid in sorted(a):
    x, y = a[cid], b.get(cid, [])
    m = min(len(x), len(y))
    compared += m
    for i in range(m):
        if x[i] != y[i]:
            errors.append("client %d op %d: %r vs %r" % (cid, i + 1, x[i], y[i]))
            break
if compared < 200:  # enough to be non-vacuous (about 300 at seed 3)
    errors.append("only %d operations compared" % compared)
print("%d operations compared over %d clients; %d faults in the plain run" %
      (compared, len(a), len(ordinal_faults(plain))))
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
