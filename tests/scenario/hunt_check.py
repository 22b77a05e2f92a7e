#!/usr/bin/env python3
"""hunt_check.py FAULTLINE WORKDIR CASE: runs `faultline hunt --json` in one of its cases
and checks the figures it reports (exit code, which bugs were found at which seed, the
false alarms), so the hunt's bookkeeping is tested, not only that it runs."""
import json
import os
import subprocess
import sys

fl, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.environ.get("FL_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
os.makedirs(work, exist_ok=True)


def hunt(*args):
    p = subprocess.run([fl, "hunt", "--json", "-j", "2", *args], cwd=src,
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TMPDIR=work))
    out = p.stdout.strip()
    assert out.count("\n") == 0, f"not one JSON object: {out!r}\n{p.stderr}"
    return p.returncode, json.loads(out), p.stderr


def row(o, bug):
    rows = [r for r in o["bugs"] if r["bug"] == bug]
    assert len(rows) == 1, o
    return rows[0]


if case == "own":
    # Each bug's own scenario finds it at the first seed, confirmed with the switch off.
    rc, o, err = hunt("--own", "--seeds", "1..3", "--bug", "mvcc.stale_read",
                      "--bug", "client.retry_sent_writes")
    assert rc == 0, (rc, err)
    assert o["found"] == 2 and o["hunted"] == 2 and o["own"] is True, o
    for b in ("mvcc.stale_read", "client.retry_sent_writes"):
        r = row(o, b)
        assert r["found"] and r["first_seed"] == 1 and r["runs"] == 1, r
        assert r["confirm_runs"] == 1 and r["false_alarms"] == [] and r["errors"] == 0, r
        assert r["check"] == "expect" and r["violation"].startswith("expect: "), r
        assert r["scenario"].startswith("scenarios/bugs/"), r
elif case == "not_found":
    # smoke.lua never kills a member, so a balancer that never fails over goes unseen:
    # every seed is run, none is counted as a finding, exit 1.
    rc, o, err = hunt("scenarios/smoke.lua", "--seeds", "1..3", "--bug", "client.no_failover")
    assert rc == 1, (rc, err)
    r = row(o, "client.no_failover")
    assert not r["found"] and r["first_seed"] is None and r["runs"] == 3, r
    assert r["confirm_runs"] == 0 and r["executed"] == 3 and r["check"] is None, r
elif case == "false_alarm":
    # A scenario that fails with no bug at all: every failing seed is confirmed without
    # the switch, found to fail there too, and reported as a false alarm, not a finding.
    always = os.path.join(src, "tests/scenario/shrink/always.lua")
    rc, o, err = hunt(always, "--seeds", "4..6", "--bug", "mvcc.stale_read")
    assert rc == 1, (rc, err)
    r = row(o, "mvcc.stale_read")
    assert not r["found"] and r["false_alarms"] == [4, 5, 6], r
    assert r["confirm_runs"] == 3, r
else:
    sys.exit(f"unknown case {case}")
leftovers = [f for f in os.listdir(work) if f.startswith("faultline-hunt.")]
assert not leftovers, f"temporary directories left behind: {leftovers}"
print("ok")
