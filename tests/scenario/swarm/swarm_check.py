#!/usr/bin/env python3
"""swarm_check.py FAULTLINE DIR REPO: swarm{}, on() and the swarm's replay and shrink lines.

- chaos.lua's draws are one object: the --json summary's "swarm", the first faults
  row (kind "swarm") and the "PATH: swarm: {...}" line on stderr; a replay gives the
  same world and digest;
- each aspect draws from a stream of its own: the cluster drawn alone equals the
  cluster drawn with every aspect, and so on; except, nodes and lanes restrict it;
- misuse is a script error (exit 2) naming the problem;
- a failing swarm run prints a "swarm:" brief next to its replay line; shrinking it
  prints the brief too, and the shrunk file draws the same lanes;
- on(): the rules are fault rows "on" and each firing's faults have ordinal
  rule * 1000000 + k (on_events.lua).
"""
import json, os, subprocess, sys

FIRING_BASE = 1000000


def run(bin_, path, seed, db, *extra, want=None):
    p = subprocess.run([bin_, "run", path, "--seed", str(seed), "--db", db, "--json"] + list(extra),
                       capture_output=True, text=True, timeout=600)
    if want is not None:
        assert p.returncode == want, "%s seed %s: exit %d, want %d\n%s" % (
            path, seed, p.returncode, want, p.stderr[-2000:])
    s = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, s, p.stderr


def scenario(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    bin_, d, repo = sys.argv[1:4]
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "swarm.db")
    chaos = os.path.join(repo, "scenarios", "chaos.lua")

    # the drawn world: summary, first faults row, stderr line; a replay is identical
    _, a, err = run(bin_, chaos, 3, db, want=0)
    sw = a["swarm"]
    for k in ("cluster", "clients", "workload", "lanes_every_ms", "buggify", "triggers"):
        assert k in sw, "swarm lacks " + k
    assert a["faults"][0]["kind"] == "swarm" and a["faults"][0]["detail"] == sw
    line = [l for l in err.splitlines() if l.startswith(chaos + ": swarm: ")]
    assert len(line) == 1, "no swarm line on stderr"
    assert json.loads(line[0].split(": swarm: ", 1)[1]) == sw
    _, b, _ = run(bin_, chaos, 3, db, want=0)
    assert b["swarm"] == sw and b["digest"] == a["digest"], "a replay draws another world"
    _, c, _ = run(bin_, chaos, 4, db, want=0)
    assert c["swarm"] != sw, "seeds 3 and 4 drew the same world"

    # streams of their own: one aspect drawn alone equals it drawn with all of them
    body = 'scenario { name = "s", workload = { rate = 0 } }\nrun(100*ms)\n'
    every = scenario(d, "every.lua", "swarm {}\n" + body)
    for aspect, key in (("cluster", "cluster"), ("clients", "clients"),
                        ("workload", "workload"), ("faults", "lanes_every_ms"),
                        ("buggify", "buggify"), ("triggers", "triggers")):
        alone = scenario(d, "alone_%s.lua" % aspect, 'swarm { "%s" }\n' % aspect + body)
        for seed in (1, 2, 7):
            _, x, _ = run(bin_, every, seed, db, want=0)
            _, y, _ = run(bin_, alone, seed, db, want=0)
            # failpoint nodes and trigger times scale with the drawn cluster
            strip = lambda v: [{k: e[k] for k in ("name", "on", "action", "p_ppm", "count")
                                if k in e} for e in v] if isinstance(v, list) else v
            assert strip(x["swarm"][key]) == strip(y["swarm"][key]), \
                "seed %d: %s drawn alone differs" % (seed, aspect)
            assert set(y["swarm"]) == {key}, "%s alone drew %s" % (aspect, sorted(y["swarm"]))
    exc = scenario(d, "except.lua", 'swarm { except = { "buggify", "triggers" } }\n' + body)
    _, x, _ = run(bin_, exc, 1, db, want=0)
    assert "buggify" not in x["swarm"] and "triggers" not in x["swarm"] and "cluster" in x["swarm"]
    five = scenario(d, "five.lua", 'swarm { "cluster", nodes = { 5 } }\n' + body)
    for seed in (1, 2, 3, 4):
        _, x, _ = run(bin_, five, seed, db, want=0)
        assert x["swarm"]["cluster"]["nodes"] == 5
    lanes = scenario(d, "lanes.lua", 'swarm { "faults", lanes = { "partition", "kill" } }\n' + body)
    for seed in (1, 2, 3, 4):
        _, x, _ = run(bin_, lanes, seed, db, want=0)
        got = set(x["swarm"]["lanes_every_ms"])
        assert got and got <= {"partition", "kill"}, "lanes drawn: %s" % sorted(got)

    # misuse is a script error naming the problem
    for name, text, msg in (
            ("late.lua", 'scenario { name = "s" }\nswarm {}\n', "must be called once"),
            ("aspect.lua", 'swarm { "bogus" }\nscenario { name = "s" }\n', "unknown aspect 'bogus'"),
            ("lane.lua", 'swarm { lanes = { "bogus" } }\nscenario { name = "s" }\n',
             "unknown lane 'bogus'"),
            ("opt.lua", 'swarm { bogus = 1 }\nscenario { name = "s" }\n', "bogus"),
            ("kind.lua", 'scenario { name = "s" }\non("bogus", function() end)\n',
             "unknown event kind 'bogus'")):
        rc, _, err = run(bin_, scenario(d, name, text), 1, db)
        assert rc == 2 and msg in err, "%s: exit %d, stderr %r" % (name, rc, err[-500:])

    # a failing swarm run: the brief next to the replay line; shrinking keeps the world
    bug = ["--bug", "client.no_failover"]
    rc, f, err = run(bin_, chaos, 3, db, *bug)
    assert rc == 1, "chaos seed 3 with client.no_failover passes"
    lines = err.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("replay: "))
    assert lines[i - 1].startswith("swarm: ") and "nodes" in lines[i - 1], lines[i - 1]
    out = os.path.join(d, "chaos-shrunk.lua")
    p = subprocess.run([bin_, "shrink", chaos, "--seed", "3", "-o", out] + bug,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, "shrink exit %d: %s" % (p.returncode, p.stderr[-2000:])
    assert any(l.startswith("shrink: swarm: ") for l in p.stderr.splitlines()), p.stderr[:2000]
    rc, g, _ = run(bin_, out, 3, db, *bug)
    assert rc == 1, "the shrunk swarm run does not fail"
    assert g["swarm"]["lanes_every_ms"] == f["swarm"]["lanes_every_ms"]
    assert g["swarm"]["triggers"] == f["swarm"]["triggers"]
    ordinals = lambda s: sum(1 for x in s["faults"] if "ordinal" in x)
    assert ordinals(g) < ordinals(f), "no fault dropped: %d -> %d" % (ordinals(f), ordinals(g))

    # on(): rules and firings in the faults
    _, o, _ = run(bin_, os.path.join(repo, "tests", "scenario", "swarm", "on_events.lua"), 1, db,
                  want=0)
    rules = {x["ordinal"] for x in o["faults"] if x["kind"] == "on"}
    assert len(rules) == 15, "on() rules recorded: %d" % len(rules)
    fired = [x for x in o["faults"] if x.get("ordinal", 0) >= FIRING_BASE]
    assert {x["kind"] for x in fired} >= {"kill"}, "no kill from a handler"
    for x in fired:
        assert x["ordinal"] // FIRING_BASE in rules, "firing %d of no rule" % x["ordinal"]
    print("ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL:", e)
        sys.exit(1)
