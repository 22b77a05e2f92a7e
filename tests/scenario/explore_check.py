#!/usr/bin/env python3
"""explore_check.py FAULTLINE WORKDIR CASE: runs `faultline explore --json` in one of its
cases and checks what it reports and writes.

  find         on a scenario without faults, a bug that only a crash brings out is found
               by a mutant (an inserted fault), confirmed without the switch, shrunk and
               written: the file replays failing with the switch and passing without it
  determinism  the same invocation twice (a swarm scenario: reseeds, drops, moves) gives
               byte-identical stdout and files, whatever -j is
  nobug        without --bug on a clean scenario: nothing found, exit 0, coverage counted
  risky        a run's risky situations (a leader removing itself, a second configuration
               change while one is pending, ...): listed with their moments, present only
               when the run reaches them, the digest the same without coverage; the
               explorer counts them and aims faults at them
  ablate       shrink{ lanes }: a run keeps only the lanes named, each with its own draws
               (the same run as swarm{ lanes } names them); a chaos run that reaches a
               compaction under an unsynced watcher and passes with
               mvcc.watch_compacted_lost fails with only one of its lanes; the explorer
               ablates the lanes of an entry that reached a rare risky situation, and
               finds raft.multiple_conf_changes through such a child
  focus        the lane bandit: half the fresh seeds run one fault lane alone, drawn by
               the rarity of the risky situations the runs that drew each lane reached
               (reported per lane); with raft.removed_leader_counts_self at --seed 9 such a
               seed, membership alone, is the first failure (run 5)
  edges        (argument: ON or OFF, the build's FL_EXPLORE_COVERAGE) in an explore build,
               a run reports the code edges it took, the same in every process, and they
               reach the explorer: counted,
               corpus entries kept for new edges alone, the same output from the same
               invocation; in a normal build, a run reports none and the explorer none
"""
import json
import os
import shutil
import subprocess
import sys

fl, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.environ.get("FL_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
quiet = os.path.join(src, "tests", "scenario", "explore", "quiet.lua")
chaos = os.path.join(src, "scenarios", "chaos.lua")
os.makedirs(work, exist_ok=True)


def explore(*args, out="out"):
    p = subprocess.run([fl, "explore", "--json", "--out", os.path.join(work, out), *args],
                       cwd=work, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, TMPDIR=work))
    text = p.stdout.strip()
    assert text.count("\n") == 0, f"not one JSON object: {text!r}\n{p.stderr}"
    return p.returncode, json.loads(text), p.stdout, p.stderr


def run(path, seed, *bug):
    args = [fl, "run", path, "--seed", str(seed), "--db", os.path.join(work, "replay.db")]
    for b in bug:
        args += ["--bug", b]
    p = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr


if case == "find":
    bug = "mvcc.revision_reset_on_restart"
    rc, o, _, err = explore(quiet, "--bug", bug, "--runs", "120", "--shrink-runs", "25",
                            "-j", "2")
    assert rc == 0, (rc, err)
    (r,) = o["bugs"]
    assert r["bug"] == bug and r["found"] and r["errors"] == 0, r
    f = r["findings"][0]
    assert f["run"] == r["runs"] and r["runs"] <= 120, r
    # a plain run of the scenario has no fault: only a schedule with an added one can
    # fail (inserted, moved or retimed, or carried over from a parent by reworld or cross)
    how = f["schedule"]
    assert how != "fresh" and any(m in how for m in ("insert", "move", "retime", "reworld",
                                                     "cross", "aim")), f
    assert r["confirm_runs"] >= 1 and r["corpus"] >= 1 and r["signatures"] > 0, r
    text = open(f["file"]).read()
    assert text.startswith("shrink{") and "add_faults" in text.split("\n")[0], text[:300]
    assert f["replay"] == f"faultline run {f['file']} --seed {f['seed']} --bug {bug}", f
    rc, err = run(f["file"], f["seed"], bug)
    assert rc == 1, ("the written file does not fail with the switch", rc, err)
    rc, err = run(f["file"], f["seed"])
    assert rc == 0, ("the written file fails without the switch", rc, err)
    rc, err = run(quiet, f["seed"], bug)
    assert rc == 0, ("the scenario fails with the switch and no fault", rc, err)
elif case == "determinism":
    args = [chaos, "--runs", "16", "--seed", "5", "--bug", "mvcc.watch_old_after_partition",
            "--shrink-runs", "4", "--keep-going"]
    outs = []
    for jobs in ("2", "1"):
        shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
        rc, o, stdout, err = explore(*args, "-j", jobs)
        assert rc in (0, 1), (rc, err)
        files = {}
        for n in sorted(os.listdir(os.path.join(work, "out"))):
            files[n] = open(os.path.join(work, "out", n)).read()
        outs.append((stdout, files, o))
    assert outs[0][0] == outs[1][0], ("stdout differs", outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1], "written files differ"
    (r,) = outs[0][2]["bugs"]
    assert r["fresh"] + r["mutants"] == r["explored"] and r["mutants"] > 0, r
    found = [n for n in outs[0][1] if "-alarm" not in n]  # false alarms are kept too
    assert len(found) == len(r["findings"]), (outs[0][1].keys(), r)
    alarms = len(outs[0][1]) - len(found)
    assert alarms == len(r["false_alarms"]), (outs[0][1].keys(), r)
elif case == "nobug":
    rc, o, _, err = explore(quiet, "--runs", "16", "-j", "2")
    assert rc == 0, (rc, err)
    (r,) = o["bugs"]
    assert r["bug"] is None and not r["found"] and r["findings"] == [], r
    assert r["explored"] == 16 and r["runs"] == 16 and r["signatures"] > 0, r
    assert r["features"] > 0 and 1 <= r["corpus"] <= 16 and r["confirm_runs"] == 0, r
elif case == "edges":
    on = sys.argv[4] == "ON"
    cov = []
    for i in range(2):  # two processes: each loads the binary and libc elsewhere
        db = os.path.join(work, f"edges{i}.db")
        # in chaos seed 7, node code called back from a shared library tail-calls the edge
        # callback, which then sees a return address in that library (run_coverage.c)
        p = subprocess.run([fl, "run", chaos, "--seed", "7", "--json", "--db", db], cwd=work,
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, FAULTLINE_COVERAGE="1"))
        assert p.returncode == 0, (p.returncode, p.stderr)
        cov.append(json.loads(p.stdout)["coverage"])
    assert ("edges" in cov[0]) == on, (on, sorted(cov[0]))
    if on:
        assert len(cov[0]["edges"]) > 100, len(cov[0]["edges"])
        assert all("#" in e for e in cov[0]["edges"]), cov[0]["edges"][:5]
        assert cov[0]["edges"] == cov[1]["edges"], "the same run reached other edges"
    rc, o, stdout, err = explore(quiet, "--runs", "16", "--seed", "2", "-j", "2")
    assert rc == 0, (rc, err)
    (r,) = o["bugs"]
    if on:
        assert r["edges"] > 100 and r["corpus_by_edges"] >= 1, r
        rc, o2, stdout2, err = explore(quiet, "--runs", "16", "--seed", "2", "-j", "1")
        assert stdout2 == stdout, ("the same invocation differs", stdout, stdout2)
    else:
        assert r["edges"] == 0 and r["corpus_by_edges"] == 0, r
elif case == "risky":
    def cov_run(seed, *bug, coverage="1"):
        args = [fl, "run", chaos, "--seed", str(seed), "--json",
                "--db", os.path.join(work, "risky.db")]
        for b in bug:
            args += ["--bug", b]
        p = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, FAULTLINE_COVERAGE=coverage))
        assert p.returncode in (0, 1), (p.returncode, p.stderr)
        return json.loads(p.stdout)
    # chaos seed 28: the membership lane removes the member that leads (the removal is
    # appended on it), during an outage
    o = cov_run(28)
    risky = o["coverage"]["risky"]
    names = [x["what"] for x in risky]
    assert "leader_removes_self" in names and "change_during_outage" in names, names
    assert all(names.count(n) <= 2 for n in names), names
    assert [x["at_ms"] for x in risky] == sorted(x["at_ms"] for x in risky), risky
    events = ("conf_change", "snapshot_install", "snapshot_sent", "compact", "leader", "append")
    assert all(x.get("on", "conf_change") in events and x["node"] >= 1 for x in risky), risky
    assert cov_run(28, coverage="0")["digest"] == o["digest"], "coverage changed the run"
    # a second configuration change while one is pending: only when the leader accepts
    # it, i.e. with raft.multiple_conf_changes on (seed 91 fails then); never without
    on = [x["what"] for x in cov_run(91, "raft.multiple_conf_changes")["coverage"]["risky"]]
    off = [x["what"] for x in cov_run(91)["coverage"]["risky"]]
    assert "change_while_pending" in on and "change_while_pending" not in off, (on, off)
    # Raft's Figure 8 shape: a member that led before leads again, holding entries past
    # the commit index, while the member that led in between is down. Chaos seed 48
    # (churn, which fails with raft.commit_old_term) reaches it; seed 1 (no churn) does
    # not, though it reaches a leader with uncommitted entries
    names = [x["what"] for x in cov_run(48)["coverage"]["risky"]]
    assert "leader_again_with_uncommitted" in names, names
    names = [x["what"] for x in cov_run(1)["coverage"]["risky"]]
    assert "leader_again_with_uncommitted" not in names, names
    # the explorer counts them and aims faults at them
    rc, o, _, err = explore(chaos, "--runs", "16", "--seed", "1", "-j", "2")
    assert rc == 0, (rc, err)
    (r,) = o["bugs"]
    assert r["risky"] >= 5 and r["aimed"] >= 1, r
elif case == "ablate":
    text = open(chaos).read()
    def variant(name, head="", swarm=None):
        t = text if swarm is None else text.replace("local world = swarm {}",
                                                     "local world = swarm " + swarm, 1)
        assert t != text or swarm is None, "chaos.lua no longer draws its world with swarm {}"
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(head + t)
        return path
    def jrun(path, seed, *bug, coverage="1"):
        args = [fl, "run", path, "--seed", str(seed), "--json",
                "--db", os.path.join(work, "ablate.db")]
        for b in bug:
            args += ["--bug", b]
        p = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, FAULTLINE_COVERAGE=coverage))
        assert p.returncode in (0, 1), (p.returncode, p.stderr)
        return json.loads(p.stdout)
    bug = "mvcc.watch_compacted_lost"
    # chaos seed 152 draws five lanes (lag among them), reaches a compaction under an
    # unsynced watcher and passes with the switch on
    full = jrun(chaos, 152, bug)
    assert full["verdict"] == "pass", full["verdict"]
    assert len(full["swarm"]["lanes_every_ms"]) >= 5 and "lag" in full["swarm"]["lanes_every_ms"]
    assert "compact_under_unsynced_watcher" in [x["what"] for x in full["coverage"]["risky"]]
    # with only its lag lane: the same lag draws, the other lanes off, and it fails (not
    # without the switch); the directive gives the run swarm{ lanes } gives
    lag = variant("lag.lua", 'shrink{ lanes = {"lag"} }; ')
    o = jrun(lag, 152, bug)
    assert o["swarm"]["lanes_every_ms"] == {"lag": full["swarm"]["lanes_every_ms"]["lag"]}, o["swarm"]
    assert o["shrink"]["lanes"] == ["lag"], o["shrink"]
    assert o["verdict"] == "fail", o["verdict"]
    assert jrun(lag, 152)["verdict"] == "pass", "fails without the switch"
    same = jrun(variant("swarm-lag.lua", swarm='{ lanes = { "lag" } }'), 152, bug)
    assert same["digest"] == o["digest"], (same["digest"], o["digest"])
    # a lane the scenario's swarm{} does not allow: an error with FILE:LINE, exit 2
    bad = variant("nolane.lua", 'shrink{ lanes = {"lag"} }; ', swarm='{ lanes = { "kill" } }')
    p = subprocess.run([fl, "run", bad, "--seed", "1", "--db", os.path.join(work, "bad.db")],
                       cwd=work, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "shrink.lanes: none of them is a lane" in p.stderr, p.stderr
    # the explorer ablates: once a rare risky situation is reached, the lanes of the
    # first entry that reached it, one child per lane
    rc, o, _, err = explore(chaos, "--runs", "40", "--seed", "1", "-j", "2")
    (r,) = o["bugs"]
    assert rc == 0 and r["ablated"] >= 2, (r, err)
    assert "ablating run" in err, err
    # (It once also found raft.multiple_conf_changes at --seed 4 through an "ablate
    # membership" child; since chaos.lua's split change, random worlds find that switch on
    # 13 of 200 seeds and explore's fresh and reworld children find it first, so the
    # finding no longer shows ablation. The lane directive above is what ablation runs.)
elif case == "focus":
    rc, o, _, err = explore(chaos, "--runs", "16", "--seed", "1", "-j", "2")
    (r,) = o["bugs"]
    assert rc == 0 and r["focused"] >= 1 and r["focused"] <= r["fresh"], (r, err)
    bandit = r["lane_bandit"]
    assert len(bandit) >= 10, bandit
    assert all(v["runs"] >= 1 for v in bandit.values()), bandit
    assert sum(v["runs"] for v in bandit.values()) >= 16, bandit
    assert max(v["reward"] for v in bandit.values()) > 0, bandit
    # the first failure with raft.removed_leader_counts_self at --seed 9 is a fresh
    # seed run with its membership lane alone (run 5). Since each explore seed draws
    # fresh worlds of its own (explore_run.c fresh_seed), --seed 1 no longer finds it so
    # in 56 runs; of explore seeds 2..14 (56 or 80 runs each), seed 9 is the one whose
    # first failure is such a seed (others: plain fresh, ablate membership, reworld).
    bug = "raft.removed_leader_counts_self"
    rc, o, _, err = explore(chaos, "--bug", bug, "--runs", "16", "--seed", "9", "-j", "2",
                            "--shrink-runs", "1", out="found")
    (r,) = o["bugs"]
    assert rc == 0 and r["found"] and r["runs"] <= 16, (r, err)
    f = r["findings"][0]
    assert f["schedule"] == "fresh, membership alone", f
    assert 'lanes = {"membership"}' in open(f["file"]).read(), f["file"]
else:
    sys.exit(f"unknown case {case}")
print("ok")
