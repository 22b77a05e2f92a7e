#!/usr/bin/env python3
"""replay_check.py FAULTLINE DIR: a failing run with client faults replays and shrinks.

replay_client.lua fails one expect because client 1 is isolated, among decoy faults on
client 2. Checks: the run fails (exit 1) and prints its replay command; that command,
run again, gives the same digest and the same fault rows; `faultline shrink` keeps only
the client isolation (the decoys' ordinals skipped) and the written file fails the
same expect again, with the isolation as its one recorded fault.
"""
import json, os, re, shlex, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECT = "client 1 reads while it is cut from every member"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run_json(bin_, args, db):
    p = subprocess.run([bin_] + args + ["--db", db, "--json"], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, json.loads(p.stdout), p.stderr


def failed_expects(s):
    return [it["message"] for it in s["checks"]["expect"]["items"] if it["verdict"] == "fail"]


def rows(s):
    return [(f.get("ordinal"), f["kind"], f["target"]) for f in s["faults"]]


def main():
    bin_, d = sys.argv[1:3]
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "replay.db")
    scn = os.path.join(HERE, "replay_client.lua")
    rc, first, err = run_json(bin_, ["run", scn, "--seed", "1"], db)
    if rc != 1 or failed_expects(first) != [EXPECT]:
        fail("the run must fail its one expect: exit %d, %r" % (rc, failed_expects(first)))
    if (5, "partition", "c1|n1,n2,n3") not in rows(first):
        fail("no client isolation row: %r" % rows(first))
    m = re.search(r"^replay: faultline (run .*)$", err, re.M)
    if not m:
        fail("no replay command on stderr: %s" % err[-2000:])
    rc, again, _ = run_json(bin_, shlex.split(m.group(1)), db)
    if rc != 1 or again["digest"] != first["digest"] or rows(again) != rows(first):
        fail("the replay differs: exit %d, digest %s vs %s" % (rc, again["digest"],
                                                              first["digest"]))
    out = os.path.join(d, "shrunk.lua")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([bin_, "shrink", scn, "--seed", "1", "-o", out, "--quiet"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or p.stdout.strip() != out:
        fail("shrink exit %d: %s %s" % (p.returncode, p.stdout, p.stderr[-2000:]))
    line1 = open(out).readline()
    m = re.match(r"shrink\{ skip_faults = \{([0-9, ]*)\}", line1)
    if not m or [int(x) for x in m.group(1).split(",")] != [1, 2, 3, 4, 6, 7, 8]:
        fail("the shrunk file should skip every decoy and keep #5: %s" % line1)
    rc, small, _ = run_json(bin_, ["run", out, "--seed", "1"], db)
    kept = [r for r in rows(small) if r[0] is not None]
    if rc != 1 or failed_expects(small) != [EXPECT] or kept != [(5, "partition", "c1|n1,n2,n3")]:
        fail("the shrunk file: exit %d, expects %r, faults %r" % (rc, failed_expects(small),
                                                                 kept))
    print("ok: replayed with digest %s; shrunk to the client isolation alone" % first["digest"])


main()
