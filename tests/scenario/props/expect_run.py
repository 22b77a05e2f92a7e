#!/usr/bin/env python3
"""expect_run.py: runs one scenario on some seeds with `faultline run --json` and checks
what the checks said (tests/cmake/props.cmake).

usage: expect_run.py BIN SCENARIO SEEDS DIR [--exit N] [--verdict CHECK=pass|fail]...
                     [--property CHECK=NAME[|NAME...]]... [--contains CHECK=TEXT]...
                     [--same-digest-paranoid] -- [faultline run args...]

SEEDS is A..B. --property reads the violation's "property" (raft_safety: its violation;
converge: "corruption" when the corruption check failed, else its invariant's property;
liveness: the rule of its first failure). --contains looks for TEXT in the check's JSON.
--same-digest-paranoid runs each seed once more with --paranoid and wants the same
digest (and paranoid.events_checked > 0 in the second). Exit 0 when every run matched.
"""
import json
import os
import subprocess
import sys


def prop_of(check, obj):
    if check == "raft_safety":
        v = obj.get("violation")
        return json.loads(v)["property"] if v else ""
    if check == "converge":
        if obj.get("corruption"):
            return "corruption"
        inv = obj.get("invariant")
        return json.loads(inv)["property"] if inv else ""
    if check == "liveness":
        first = obj.get("first_failure") or ""
        return first.split(" ")[0]
    return ""


def run(bin_, scen, seed, db, args, paranoid_env=None):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    env = dict(os.environ)
    if paranoid_env is not None:
        env["FAULTLINE_PARANOID"] = paranoid_env
    p = subprocess.run([bin_, "run", scen, "--seed", str(seed), "--db", db, "--json"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600,
                       env=env)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stderr


def pairs(opts, name):
    out = []
    for o in opts.get(name, []):
        k, _, v = o.partition("=")
        out.append((k, v))
    return out


def main():
    argv = sys.argv[1:]
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    else:
        extra = []
    bin_, scen, seeds, d = argv[:4]
    opts, i = {}, 4
    while i < len(argv):
        if argv[i] == "--same-digest-paranoid":
            opts.setdefault("same", []).append(True)
            i += 1
            continue
        opts.setdefault(argv[i].lstrip("-"), []).append(argv[i + 1])
        i += 2
    a, _, b = seeds.partition("..")
    os.makedirs(d, exist_ok=True)
    db = os.path.join(d, "run.db")
    bad = 0
    for seed in range(int(a), int(b or a) + 1):
        # with --same-digest-paranoid the first run is surely without --paranoid
        rc, s, err = run(bin_, scen, seed, db, extra, "0" if opts.get("same") else None)
        where = "%s seed %d" % (os.path.basename(scen), seed)
        if s is None:
            print("%s: no JSON (exit %d): %s" % (where, rc, err.strip()[-300:]))
            bad += 1
            continue
        checks = s.get("checks", {})
        for want in opts.get("exit", []):
            if rc != int(want):
                print("%s: exit %d, wanted %s" % (where, rc, want))
                bad += 1
        for check, verdict in pairs(opts, "verdict"):
            got = checks.get(check, {}).get("verdict")
            if got != verdict:
                print("%s: %s is %s, wanted %s" % (where, check, got, verdict))
                bad += 1
        for check, names in pairs(opts, "property"):
            got = prop_of(check, checks.get(check, {}))
            if got not in names.split("|"):
                print("%s: %s property '%s', wanted %s" % (where, check, got, names))
                bad += 1
        for check, text in pairs(opts, "contains"):
            dump = json.dumps(checks.get(check, {}))
            if text not in dump:
                print("%s: %s has no '%s': %s" % (where, check, text, dump[:600]))
                bad += 1
        if opts.get("same"):
            rc2, s2, _ = run(bin_, scen, seed, db, extra + ["--paranoid"])
            if not s2 or s2.get("digest") != s.get("digest"):
                print("%s: digest %s without --paranoid, %s with" %
                      (where, s.get("digest"), s2 and s2.get("digest")))
                bad += 1
            elif not (s2.get("paranoid") or {}).get("events_checked"):
                print("%s: --paranoid checked no event" % where)
                bad += 1
        print("%s: exit %d, %s" % (where, rc, ", ".join(
            "%s=%s" % (k, v.get("verdict")) for k, v in sorted(checks.items()))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
