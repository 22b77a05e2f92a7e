#!/usr/bin/env python3
"""restore_check.py: the swarm's restore flow in chaos.lua (issue 13). On a seed that
draws it ("restore" in the swarm object): a backup is taken during the fault phase and
restored into every member when the scenario is over (a "restore" faults row naming
them all, after the scenario's last expect); the
linearizability and watch checkers say where the history was cut and what they left
out; the run passes. With server.restore_keeps_ids the same seed fails raft_safety
(the restored members keep identities the checker knows, with a lower term). A seed
that does not draw the flow has no "restore" key, row or cut.

usage: restore_check.py FAULTLINE CHAOS.lua DBDIR SEED_WITH SEED_WITHOUT
"""
import json
import os
import subprocess
import sys


def run(bin_, scn, seed, db, *extra):
    p = subprocess.run([bin_, "run", scn, "--seed", str(seed), "--db", db, "--json", *extra],
                       capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout, strict=False)


def main():
    bin_, scn, dbdir, seed, other = sys.argv[1:6]
    os.makedirs(dbdir, exist_ok=True)
    db = os.path.join(dbdir, "restore.db")
    rc, s = run(bin_, scn, seed, db)
    assert rc == 0, f"seed {seed}: exit {rc}, verdict {s.get('verdict')}"
    assert "restore" in s["swarm"], f"seed {seed} does not draw the restore flow"
    rows = [f for f in s["faults"] if f["kind"] == "restore"]
    assert len(rows) == 1, f"one restore row expected: {rows}"
    saves = [f for f in s["faults"] if f["kind"] == "snapshot_save" and f["at_ms"] < rows[0]["at_ms"]]
    assert saves, "no backup before the restore"
    for name in ("linearizability", "watch"):
        c = s["checks"][name]
        assert c["verdict"] == "pass", (name, c["verdict"])
        cut = c.get("restore_cut")
        assert cut and cut["at_ms"] == rows[0]["at_ms"], (name, cut, rows[0])
    # the restore comes when the scenario is over: after its own checks of the recovery
    last_expect = max(i["at_ns"] for i in s["checks"]["expect"]["items"]) // 1000000
    assert rows[0]["at_ms"] >= last_expect, (rows[0], last_expect)
    assert s["checks"]["raft_safety"]["verdict"] == "pass"
    assert s["checks"]["converge"]["verdict"] == "pass"
    # the same seed replays to the same digest
    rc2, s2 = run(bin_, scn, seed, db)
    assert rc2 == 0 and s2["digest"] == s["digest"], (s["digest"], s2["digest"])

    rc, b = run(bin_, scn, seed, db, "--bug", "server.restore_keeps_ids")
    assert rc == 1, f"seed {seed} with server.restore_keeps_ids: exit {rc}"
    v = b["checks"]["raft_safety"]
    assert v["verdict"] == "fail" and "term_durability" in json.dumps(v), v

    rc, n = run(bin_, scn, other, db)
    assert rc == 0, f"seed {other}: exit {rc}"
    assert "restore" not in n["swarm"], f"seed {other} draws the restore flow"
    assert not [f for f in n["faults"] if f["kind"] == "restore"]
    assert "restore_cut" not in n["checks"]["linearizability"]
    print("restore_check: ok")


if __name__ == "__main__":
    main()
