#!/usr/bin/env python3
"""shrink_check.py FAULTLINE DIR SCENARIO SEED CHECK [--bug NAME]... [--reshrink]

Shrinks SCENARIO at SEED and checks the result: exit 0 and the written path on stdout;
the file replays with a plain `faultline run FILE --seed SEED` and fails CHECK again
(for expect: the same first failed claim); it has fewer recorded faults, a shorter
run or fewer clients than the original; every line of the original from line 2 on is unchanged (so
line numbers hold) and line 1 starts with the shrink{} directive. With --reshrink the
written file is shrunk once more: exit 0 or 1, never an error, one directive only.
"""
import json, os, subprocess, sys

def run_json(bin_, path, seed, bugs, db):
    p = subprocess.run([bin_, "run", path, "--seed", seed, "--db", db, "--json"] + bugs,
                       capture_output=True, text=True, timeout=600)
    return p.returncode, json.loads(p.stdout), p.stderr

def first_failed_expect(s):
    for it in s["checks"].get("expect", {}).get("items", []):
        if it["verdict"] == "fail":
            return it["message"]
    return None

def ordinal_faults(s):
    return sum(1 for f in s["faults"] if "ordinal" in f)

def main():
    bin_, d, scn, seed, check = sys.argv[1:6]
    rest = sys.argv[6:]
    reshrink = "--reshrink" in rest
    bugs = [a for a in rest if a != "--reshrink"]
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "check.db")
    out = os.path.join(d, "shrunk.lua")
    for p in (out, db):
        if os.path.exists(p):
            os.unlink(p)
    rc, orig, _ = run_json(bin_, scn, seed, bugs, db)
    assert rc == 1, "the original run must fail (exit %d)" % rc
    assert orig["checks"][check]["verdict"] == "fail", "the original does not fail " + check
    p = subprocess.run([bin_, "shrink", scn, "--seed", seed, "-o", out] + bugs,
                       capture_output=True, text=True, timeout=900)
    sys.stderr.write(p.stderr)
    assert p.returncode == 0, "shrink exit %d" % p.returncode
    assert p.stdout.strip() == out, "stdout is not the written path: %r" % p.stdout
    assert "removed:" in p.stderr, "no removal report"
    rc, new, err = run_json(bin_, out, seed, bugs, db)
    assert rc == 1, "the shrunk file does not fail (exit %d): %s" % (rc, err)
    assert new["checks"][check]["verdict"] == "fail", "the shrunk file does not fail " + check
    if check == "expect":
        assert first_failed_expect(new) == first_failed_expect(orig) or \
            first_failed_expect(orig) in [i["message"] for i in new["checks"]["expect"]["items"]
                                          if i["verdict"] == "fail"], "another expect fails"
    fewer = ordinal_faults(new) < ordinal_faults(orig)
    shorter = new["script_end_ms"] < orig["script_end_ms"]
    # a bug caught at its first wrong step (raft_safety's commit_quorum) leaves no fault
    # or time to drop: dropping a client is the shrinker's other way to be smaller
    fewer_clients = len(new.get("clients", [])) < len(orig.get("clients", []))
    print("faults %d -> %d, script end %d -> %d ms, clients %d -> %d" %
          (ordinal_faults(orig), ordinal_faults(new), orig["script_end_ms"],
           new["script_end_ms"], len(orig.get("clients", [])), len(new.get("clients", []))))
    assert fewer or shorter or fewer_clients, \
        "neither fewer faults, nor a shorter run, nor fewer clients"
    a = open(scn).read().split("\n")
    b = open(out).read().split("\n")
    assert b[0].startswith("shrink{"), "line 1 does not start with the directive"
    assert b[0].endswith(a[0]), "line 1 does not end with the original line 1"
    assert b[1:len(a)] == a[1:], "the original lines moved or changed"
    assert "shrink" in new and new["shrink"].get("skip_faults") is not None or \
        "shrink" in new, "the summary does not show the directive"
    if reshrink:
        out2 = os.path.join(d, "shrunk2.lua")
        p = subprocess.run([bin_, "shrink", out, "--seed", seed, "-o", out2, "--quiet"] + bugs,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode in (0, 1), "re-shrink exit %d: %s" % (p.returncode, p.stderr)
        if p.returncode == 0:
            line1 = open(out2).read().split("\n")[0]
            assert line1.count("shrink{") == 1, "two directives on line 1: " + line1
            rc, again, _ = run_json(bin_, out2, seed, bugs, db)
            assert rc == 1 and again["checks"][check]["verdict"] == "fail"
        print("re-shrink exit %d" % p.returncode)
    print("ok")

if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("FAIL:", e)
        sys.exit(1)
