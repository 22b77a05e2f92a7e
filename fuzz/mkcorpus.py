#!/usr/bin/env python3
"""mkcorpus.py: writes the seed corpora of the importer targets (fuzz/corpus/jsonl,
jepsen, porcupine) and the generator seeds of fuzz/corpus/lua. Deterministic (fixed
random seeds), so running it again gives the same files.

The histories come from a small simulation of an etcd-like store (one revision
counter, keys with create/mod revisions and versions, concurrent clients with call
and return times, ok/fail/unknown outcomes, watches that see every change) written in
each format; a few get a planted violation (a stale read, a lost write) so that both
verdicts are seeded. The JSONL corpus also takes the project's own test histories
(tests/unit/checkers/data/*.jsonl). The histdb corpus is made by mkcorpus.sh from
real runs.
"""
import json, os, random, shutil, sys

root = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(root, "corpus")


def simulate(rng, clients, ops, keys, watches, violation):
    """Returns (ops, events, watch_opens) of a linearizable run (unless violation)."""
    t = 100
    rev = 1
    store = {}  # key -> [value, create, mod, version]
    hist, wopen, wevents = [], [], []
    for w in range(1, watches + 1):
        k = rng.choice(keys)
        wopen.append({"type": "watch_open", "watch": w, "client": clients + w, "key": k,
                      "start_rev": 1, "prev_kv": rng.random() < 0.5,
                      "progress_notify": rng.random() < 0.3})
    resp = {w["watch"]: 0 for w in wopen}
    for i in range(ops):
        c = rng.randrange(1, clients + 1)
        k = rng.choice(keys)
        kind = rng.choice(["put", "put", "get", "get", "delete", "cas"])
        call = t
        t += rng.randrange(1, 40)
        lin = t
        t += rng.randrange(1, 40)
        ret = t
        o = {"type": "op", "client": c, "op": kind, "key": k, "call": call, "return": ret,
             "status": "ok"}
        prev = store.get(k)
        if kind == "put" or (kind == "cas" and prev and rng.random() < 0.7):
            v = "v%d" % i
            if kind == "cas":
                o["expect"] = prev[0]
                o["succeeded"] = True
            rev += 1
            store[k] = [v, prev[1] if prev else rev, rev, (prev[3] if prev else 0) + 1]
            o["value"] = v
            o["rev"] = rev
            ev = ("put", k, v, prev)
        elif kind == "cas":
            o["expect"] = "nope"
            o["value"] = "v%d" % i
            o["succeeded"] = False
            o["rev"] = rev
            ev = None
        elif kind == "delete":
            o["deleted"] = 1 if prev else 0
            if prev:
                rev += 1
                del store[k]
                ev = ("delete", k, None, prev)
            else:
                ev = None
            o["rev"] = rev
        else:
            o["value"] = prev[0] if prev else None
            if prev:
                o["mod_rev"] = prev[2]
            o["rev"] = rev
            ev = None
        if rng.random() < 0.05 and kind != "get":
            o["status"] = "unknown"
            o["return"] = None
        hist.append(o)
        if ev:
            for w in wopen:
                if w["key"] == ev[1]:
                    resp[w["watch"]] += 1
                    e = {"type": "watch_event", "watch": w["watch"], "response": resp[w["watch"]],
                         "event": ev[0], "key": ev[1], "mod_rev": rev, "t": lin + 1}
                    if ev[0] == "put":
                        s = store[ev[1]]
                        e.update(value=ev[2], create_rev=s[1], version=s[3])
                    if w["prev_kv"]:
                        e["prev_value"] = ev[3][0] if ev[3] else None
                    wevents.append(e)
    if violation and hist:
        gets = [o for o in hist if o["op"] == "get" and o["status"] == "ok"]
        if gets:
            g = rng.choice(gets)
            g["value"] = "never-written"
            g.pop("mod_rev", None)
    return hist, wevents, wopen


def write(path, lines):
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))


def jsonl(n):
    d = os.path.join(out, "jsonl")
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        rng = random.Random(1000 + i)
        h, ev, wo = simulate(rng, rng.randrange(1, 5), rng.randrange(1, 30),
                             ["a", "b", "c"][: rng.randrange(1, 4)], rng.randrange(0, 3), i % 5 == 4)
        lines = [json.dumps(o, separators=(",", ":")) for o in wo + h + ev]
        write(os.path.join(d, "sim-%02d.jsonl" % i), lines)
    data = os.path.join(root, "..", "tests", "unit", "checkers", "data")
    for f in sorted(os.listdir(data)):
        if f.endswith(".jsonl"):
            shutil.copy(os.path.join(data, f), os.path.join(d, "test-" + f))


def jepsen(n):
    """Jepsen/Knossos register logs: one register, read/write/cas, invoke then
    ok/fail/info per process."""
    d = os.path.join(out, "jepsen")
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        rng = random.Random(2000 + i)
        val, lines, pending = None, [], {}
        procs = rng.randrange(1, 6)
        for step in range(rng.randrange(2, 40)):
            p = rng.randrange(procs)
            if p in pending:
                f, arg = pending.pop(p)
                r = rng.random()
                if f == "read":
                    res = "ok" if r < 0.9 else "fail"
                    shown = "nil" if val is None else str(val)
                    if i % 6 == 5 and r < 0.2:
                        shown = "99"  # a planted stale read
                    lines.append("INFO  jepsen.util - %d\t:%s\t:read\t%s" % (p, res, shown))
                elif f == "write":
                    res = "ok" if r < 0.8 else ("info" if r < 0.9 else "fail")
                    if res == "ok":
                        val = arg
                    lines.append("INFO  jepsen.util - %d\t:%s\t:write\t%d" % (p, res, arg))
                else:
                    ok = val == arg[0]
                    res = "ok" if ok else "fail"
                    if ok:
                        val = arg[1]
                    lines.append("INFO  jepsen.util - %d\t:%s\t:cas\t[%d %d]" % (p, res, arg[0], arg[1]))
            else:
                f = rng.choice(["read", "write", "cas"])
                arg = rng.randrange(5) if f == "write" else (rng.randrange(5), rng.randrange(5))
                pending[p] = (f, arg)
                shown = "nil" if f == "read" else (str(arg) if f == "write" else "[%d %d]" % arg)
                lines.append("INFO  jepsen.util - %d\t:invoke\t:%s\t%s" % (p, f, shown))
        write(os.path.join(d, "reg-%02d.log" % i), lines)


def porcupine(n):
    """porcupine kv logs: get/put/append on string keys, invoke then ok."""
    d = os.path.join(out, "porcupine")
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        rng = random.Random(3000 + i)
        store, lines, pending = {}, [], {}
        procs = rng.randrange(1, 5)
        for step in range(rng.randrange(2, 40)):
            p = rng.randrange(procs)
            if p in pending:
                f, k, v = pending.pop(p)
                if f == "put":
                    store[k] = v
                elif f == "append":
                    store[k] = store.get(k, "") + v
                else:
                    v = store.get(k, "")
                    if i % 6 == 5 and rng.random() < 0.3:
                        v = "x lost y"  # a planted violation
                lines.append('{:process %d, :type :ok, :f :%s, :key "%s", :value "%s"}' % (p, f, k, v))
            else:
                f = rng.choice(["get", "put", "append"])
                k = str(rng.randrange(3))
                v = "" if f == "get" else "x %d %d y" % (p, step)
                pending[p] = (f, k, v)
                lines.append('{:process %d, :type :invoke, :f :%s, :key "%s", :value "%s"}' % (p, f, k, v))
        write(os.path.join(d, "kv-%02d.txt" % i), lines)


def lua(n):
    """Seeds for the scenario generator: its input is a stream of choices, so the seeds
    are byte strings of different lengths (the generator reads each as a program)."""
    d = os.path.join(out, "lua")
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        rng = random.Random(4000 + i)
        with open(os.path.join(d, "gen-%02d.bin" % i), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.choice([8, 32, 64, 128, 256, 400]))))


if __name__ == "__main__":
    jsonl(30)
    jepsen(30)
    porcupine(30)
    lua(30)
