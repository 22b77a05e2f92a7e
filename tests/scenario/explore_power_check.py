#!/usr/bin/env python3
"""explore_power_check.py FAULTLINE WORKDIR CASE: the explorer's fresh world seeds and
its Figure 8 signal (tests/cmake/explore_power.cmake).

  seeds  `explore --seed 1` and `--seed 2` draw fresh world seeds with none in common
         (they used to be --seed, --seed+1, ...: all but one shared); the same
         invocation twice prints the same JSON; a finding's replay line names the seed
         its run drew, one of the fresh seeds listed
  split  with FAULTLINE_COVERAGE=1, a run that opens Raft's Figure 8 window (a cut-off
         leader's entry and the new leader's first entry at the same index) lists
         log_term_split once, with the node event "leader" to wait for; a run
         without that window (quiet.lua) lists none
"""
import json
import os
import subprocess
import sys

fl, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.environ.get("FL_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
quiet = os.path.join(src, "tests", "scenario", "explore", "quiet.lua")
split = os.path.join(src, "tests", "scenario", "explore", "log_split.lua")
chaos = os.path.join(src, "scenarios", "chaos.lua")
os.makedirs(work, exist_ok=True)


def explore(*args, out="out"):
    p = subprocess.run([fl, "explore", "--json", "--out", os.path.join(work, out), *args],
                       cwd=work, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, TMPDIR=work))
    text = p.stdout.strip()
    assert text.count("\n") == 0, f"not one JSON object: {text!r}\n{p.stderr}"
    return p.returncode, json.loads(text), p.stdout, p.stderr


def covered(path, seed):
    p = subprocess.run([fl, "run", path, "--seed", str(seed), "--json", "--db",
                        os.path.join(work, "run.db")], cwd=work, capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, FAULTLINE_COVERAGE="1"))
    assert p.returncode == 0, (p.returncode, p.stderr)
    return json.loads(p.stdout)


if case == "seeds":
    rc1, o1, out1, err1 = explore(quiet, "--runs", "16", "--seed", "1", "-j", "2")
    rc2, o2, out2, err2 = explore(quiet, "--runs", "16", "--seed", "1", "-j", "1")
    assert rc1 == 0 and rc2 == 0, (rc1, err1, rc2, err2)
    assert out1 == out2, "the same invocation, different output"
    rc3, o3, _, err3 = explore(quiet, "--runs", "16", "--seed", "2", "-j", "2")
    assert rc3 == 0, (rc3, err3)
    (r1,), (r3,) = o1["bugs"], o3["bugs"]
    s1, s3 = r1["fresh_seeds"], r3["fresh_seeds"]
    # the first batch is fresh seeds only, the later ones two fifths, and reworlds too
    assert len(s1) >= 8 and len(s3) >= 8, (s1, s3)
    assert len(set(s1)) == len(s1) and len(set(s3)) == len(s3), (s1, s3)
    assert not set(s1) & set(s3), ("explore seeds 1 and 2 share world seeds", set(s1) & set(s3))
    assert all(0 < s < 2**53 for s in s1 + s3), (s1, s3)
    # a finding: its replay line runs the fresh seed its run drew (chaos finds
    # client.retry_sent_writes on its first fresh seeds)
    bug = "client.retry_sent_writes"
    rc, o, _, err = explore(chaos, "--bug", bug, "--runs", "8", "--seed", "3", "-j", "2",
                            "--shrink-runs", "1", out="found")
    (r,) = o["bugs"]
    assert rc == 0 and r["found"], (r, err)
    f = r["findings"][0]
    assert f["schedule"].startswith("fresh"), f
    assert f["seed"] in r["fresh_seeds"], (f, r["fresh_seeds"])
    assert f"--seed {f['seed']} " in f["replay"] + " ", f["replay"]
elif case == "split":
    o = covered(split, 1)
    assert o["verdict"] == "pass", o["verdict"]
    hits = [x for x in o["coverage"]["risky"] if x["what"] == "log_term_split"]
    assert len(hits) == 1, o["coverage"]["risky"]
    (h,) = hits
    assert h.get("on") == "leader", h
    q = covered(quiet, 1)
    assert q["verdict"] == "pass", q["verdict"]
    assert "log_term_split" not in [x["what"] for x in q["coverage"]["risky"]], q["coverage"]
else:
    sys.exit(f"unknown case {case}")
print("ok")
