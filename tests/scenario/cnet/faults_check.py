#!/usr/bin/env python3
"""faults_check.py FAULTLINE DIR: runs faults_client.lua (seed 1) and checks the rows its
client faults leave: the --json summary's `faults` (ordinal, kind, target, detail), the
database's `faults` table (the same kind, target and detail, in order) and the report
built from the database alone (the per-run page names every client target, the
summary.json of the report repeats them). Clients are "cN" in targets, members "nN".
"""
import json, os, sqlite3, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (ordinal, kind, target, detail) of every row the scenario writes, in order.
WANT = [
    (1, "partition", "c1|n2", {"oneway": False}),
    (2, "heal", "*", None),
    (3, "partition", "c1|n1,n2,n3", {"oneway": False}),
    (4, "heal", "*", None),
    (5, "partition", "n2|c1", {"oneway": True}),
    (6, "heal", "*", None),
    (7, "partition", "c1|n3", {"oneway": True}),
    (8, "heal", "*", None),
    (9, "partition", "n1|n2,n3", {"oneway": False}),
    (10, "heal", "*", None),
    (11, "partition", "c1,n1|n2,n3", {"oneway": False}),
    (12, "heal", "*", None),
    (13, "partition", "c2|n1,n2,n3", {"oneway": False}),
    (14, "heal", "*", None),
    (15, "clog", "c1>n2", None),
    (16, "unclog", "c1>n2", None),
    (17, "clog", "*>c1", None),
    (18, "heal", "*", None),
    (19, "hold", "c1>n2", None),
    (20, "release", "c1>n2", None),
    (21, "hold", "n3>c1", None),
    (22, "release", "n3>c1", None),
    (23, "hold", "c1>*", None),
    (24, "heal", "*", None),
    (25, "release", "c1>*", None),
    (26, "net", "c1|n2", {"delay_ms": 0, "drop_ppm": 1000000, "dup_ppm": 0, "oneway": False}),
    (27, "net", "c1|n2", {"delay_ms": 0, "drop_ppm": 0, "dup_ppm": 0, "oneway": False}),
    (28, "net", "c1|*", {"delay_ms": 200, "drop_ppm": 0, "dup_ppm": 0, "oneway": False}),
    (29, "net", "c1|n1", {"delay_ms": 0, "drop_ppm": 0, "dup_ppm": 0, "oneway": True}),
    (30, "net", "c1|*", {"delay_ms": 0, "drop_ppm": 0, "dup_ppm": 0, "oneway": False}),
    (31, "net", "c1|*", {"delay_ms": 0, "drop_ppm": 0, "dup_ppm": 1000000, "oneway": False}),
    (32, "net", "c1|*", {"delay_ms": 0, "drop_ppm": 0, "dup_ppm": 0, "oneway": False}),
    (33, "net", "c2|*", {"delay_ms": 300, "drop_ppm": 0, "dup_ppm": 0, "oneway": False}),
    (34, "hold", "c2>n1", None),
    (35, "clog", "c2>n2", None),
    (36, "partition", "c2|n3", {"oneway": False}),
    (None, "heal_all", "*", None),
]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    bin_, d = sys.argv[1:3]
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "faults.db")
    for sfx in ("", "-wal", "-shm"):
        if os.path.exists(db + sfx):
            os.unlink(db + sfx)
    scn = os.path.join(HERE, "faults_client.lua")
    p = subprocess.run([bin_, "run", scn, "--seed", "1", "--db", db, "--json"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail("run exit %d: %s" % (p.returncode, p.stderr[-3000:]))
    s = json.loads(p.stdout)
    got = [(f.get("ordinal"), f["kind"], f["target"], f.get("detail")) for f in s["faults"]]
    # the run's own heal_all at its end follows the scenario's
    if got[:len(WANT)] != WANT or any(g[1] != "heal_all" for g in got[len(WANT):]):
        for i, (g, w) in enumerate(zip(got, WANT)):
            if g != w:
                fail("summary fault %d: got %r, want %r" % (i + 1, g, w))
        fail("summary faults: %d rows, want %d" % (len(got), len(WANT)))
    if s["fault_ordinals"] != 36:
        fail("fault_ordinals %r, want 36" % s["fault_ordinals"])

    con = sqlite3.connect(db)
    rows = con.execute("SELECT kind, target, detail FROM faults ORDER BY at_ns, rowid").fetchall()
    dbrows = [(k, t, json.loads(dt) if dt else None) for k, t, dt in rows]
    if dbrows[:len(WANT)] != [w[1:] for w in WANT]:
        fail("database faults differ: %r" % dbrows[:len(WANT)])

    rep = os.path.join(d, "report")
    p = subprocess.run([bin_, "report", db, "-o", rep], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        fail("report exit %d: %s" % (p.returncode, p.stderr))
    # one run: index.html is the run's page
    html = open(os.path.join(rep, "index.html")).read()
    for t in ("c1|n2", "c1|n1,n2,n3", "n2|c1", "c1,n1|n2,n3", "c2|n1,n2,n3", "c1&gt;n2",
              "*&gt;c1", "n3&gt;c1", "c1&gt;*", "c1|*", "c2|*", "c2&gt;n1"):
        if t not in html:
            fail("the report page does not show the target %s" % t)
    summ = json.load(open(os.path.join(rep, "summary.json")))
    summ = summ["runs"][0] if "runs" in summ else summ  # one run: its own object
    rtargets = [(f["kind"], f["target"]) for f in summ["faults"]]
    if rtargets[:len(WANT)] != [w[1:3] for w in WANT]:
        fail("report summary.json faults differ: %r" % rtargets)
    print("ok: %d fault rows with client targets in the summary, the database and the report"
          % len(WANT))


main()
