#!/usr/bin/env python3
"""figure8_check.py FAULTLINE DIR REPO: the swarm's figure-8 draw (run_swarm.c draw_figure8,
stream "swarm/figure8") and chaos.lua's figure-8 nemesis that acts on it.

- seed 2 draws it: the swarm object says "figure8": {"max_msg_bytes": 256}; the run has
  chaos.lua's two on() rules ("persisted", "vote_granted"), the crash at the next WAL
  save armed from a vote_granted firing (ordinal rule * 1000000 + k), the old leader's
  fast clock and the others' slow ones, and it passes; a replay has the same digest;
- with raft.commit_old_term the same seed fails raft_safety's commit_electable: the old
  leader back in power counted replicas of its old-term suffix toward a commit while
  the crashed member, whose entry at that index is of a newer term, could still win;
- worlds it must leave alone draw nothing (seeds from 1 on, until each kind was seen): the membership
  or lag lane, the promote outage, the split change, fewer than three members.
"""
import json, os, subprocess, sys

FIRING_BASE = 1000000


def run(bin_, path, seed, db, *extra):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    p = subprocess.run([bin_, "run", path, "--seed", str(seed), "--db", db, "--json"] + list(extra),
                       capture_output=True, text=True, timeout=600)
    s = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, s, p.stderr


def main():
    bin_, d, repo = sys.argv[1:4]
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "figure8.db")
    chaos = os.path.join(repo, "scenarios", "chaos.lua")

    rc, a, err = run(bin_, chaos, 2, db)
    assert rc == 0, "chaos seed 2: exit %d\n%s" % (rc, err[-2000:])
    assert a["swarm"].get("figure8") == {"max_msg_bytes": 256}, a["swarm"].get("figure8")
    faults = a["faults"]
    rules = {x["ordinal"]: x["target"] for x in faults if x["kind"] == "on"}
    assert sorted(rules.values()) == ["persisted", "vote_granted"], rules
    vote_rule = next(o for o, t in rules.items() if t == "vote_granted")
    armed = [x for x in faults if x["kind"] == "failpoint" and
             x.get("ordinal", 0) // FIRING_BASE == vote_rule and
             x["detail"].get("action") == "crash" and x["detail"].get("name") == "raft/after_save"]
    assert len(armed) == 1, "crash armed from a vote: %s" % armed
    crashed = armed[0]["target"]
    rates = [x["detail"]["rate_ppm"] for x in faults if x["kind"] == "skew" and
             x["at_ms"] > armed[0]["at_ms"]]
    assert 2000000 in rates and 250000 in rates, "skews after the crash: %s" % rates
    kills = [x for x in faults if x["kind"] == "kill" and x["at_ms"] <= armed[0]["at_ms"]]
    assert kills and kills[-1]["target"] != crashed, "the old leader was not killed first"
    rc, b, _ = run(bin_, chaos, 2, db)
    assert rc == 0 and b["digest"] == a["digest"], "a replay differs: %s %s" % (
        a["digest"], b and b["digest"])

    rc, f, err = run(bin_, chaos, 2, db, "--bug", "raft.commit_old_term")
    assert rc == 1, "chaos seed 2 with raft.commit_old_term: exit %d" % rc
    v = f["checks"]["raft_safety"]
    prop = json.loads(v["violation"])["property"] if v.get("violation") else ""
    assert prop == "commit_electable", "raft_safety: %s" % json.dumps(v)[:500]

    # worlds it leaves alone (a body-less scenario draws the same world as chaos.lua)
    body = 'swarm {}\nscenario { name = "s", workload = { rate = 0 } }\nrun(100*ms)\n'
    path = os.path.join(d, "world.lua")
    with open(path, "w") as fh:
        fh.write(body)
    seen = set()
    for seed in range(1, 41):
        if seen >= {"membership", "lag", "promote_outage", "split_change", "nodes"}:
            break
        rc, x, err = run(bin_, path, seed, db)
        assert rc == 0, "seed %d: exit %d\n%s" % (seed, rc, err[-1000:])
        sw = x["swarm"]
        why = [w for w in ("membership", "lag") if w in sw.get("lanes_every_ms", {})]
        why += [w for w in ("promote_outage", "split_change") if w in sw]
        if sw["cluster"]["nodes"] < 3:
            why.append("nodes")
        assert not (why and "figure8" in sw), "seed %d (%s) draws figure8" % (seed, why)
        seen.update(why)
    assert seen >= {"membership", "lag", "promote_outage", "split_change", "nodes"}, seen
    rc, x, _ = run(bin_, path, 2, db)
    assert rc == 0 and x["swarm"].get("figure8"), "seed 2 alone does not draw figure8"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    print("ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL:", e)
        sys.exit(1)
