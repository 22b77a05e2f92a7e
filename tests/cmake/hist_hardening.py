#!/usr/bin/env python3
"""hist_hardening.py: regression tests of issue 12's history, checker-summary and report
items, one case per ctest (tests/cmake/hist_hardening.cmake):

    hist_hardening.py CASE FAULTLINE_BINARY SOURCE_DIR WORK_DIR

Each case builds what it needs in WORK_DIR (small scenario runs, hand-damaged
databases, loose JSON lines), runs the faultline binary and checks exit codes, messages
and what the database and reports say. Exit 0 when the case holds, 1 with a message when
not. Nothing here reads a clock to decide anything.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

FL = SRC = WORK = None

TINY = """scenario { name = "tiny", cluster = { nodes = 1 }, clients = { count = 2 },
           workload = { rate = 50, keys = 4, watchers = 1 },
           checks = { "linearizability", "watch" } }
run(2*s)
"""


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, stdin=None, env=None, prefix=None):
    cmd = (prefix or []) + [FL] + args
    p = subprocess.run(cmd, cwd=WORK, input=stdin, capture_output=True, env=env, timeout=600)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    print("$ %s -> %d\n%s%s" % (" ".join(cmd), p.returncode, out[-2000:], err[-2000:]))
    return p.returncode, out, err


def expect_exit(rc, want, what):
    if rc < 0:
        fail("%s: killed by signal %d (want exit %d)" % (what, -rc, want))
    if rc != want:
        fail("%s: exit %d, want %d" % (what, rc, want))


def write(name, text, mode="w"):
    path = os.path.join(WORK, name)
    with open(path, mode) as f:
        f.write(text)
    return path


def tiny_db(name="t.db", scenario=TINY):
    write("tiny.lua", scenario)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(os.path.join(WORK, name + suffix)):
            os.remove(os.path.join(WORK, name + suffix))
    rc, out, _ = run(["run", "tiny.lua", "--seed", "1", "--db", name, "--json"])
    expect_exit(rc, 0, "recording " + name)
    return os.path.join(WORK, name), json.loads(out)


def sql(path, *stmts):
    con = sqlite3.connect(path)
    for s in stmts:
        con.execute(s)
    con.commit()
    con.close()


def query(path, q):
    con = sqlite3.connect(path)
    rows = con.execute(q).fetchall()
    con.close()
    return rows


# ---- item 4: damaged databases ------------------------------------------------------


def case_corrupt_db():
    db, _ = tiny_db()
    data = bytearray(open(db, "rb").read())
    page = int.from_bytes(data[16:18], "big")
    page = 65536 if page == 1 else page
    # Keep page 1 (the header and schema) valid; flip bytes in every other page.
    for p in range(1, len(data) // page):
        for i in range(0, page, 97):
            data[p * page + i] ^= 0xA5
    open(os.path.join(WORK, "c.db"), "wb").write(data)
    for args in (["check", "c.db"], ["report", "c.db", "-o", "crep"],
                 ["run", "tiny.lua", "--seed", "1", "--db", "c.db"]):
        rc, _, err = run(args)
        expect_exit(rc, 2, " ".join(args))
        if "corrupt" not in err:
            fail("%s: the message does not say the database is corrupt" % args[0])


def case_not_sqlite():
    write("junk.db", "SQLite format 3\0" + "x" * 5000)
    rc, _, err = run(["check", "junk.db"])
    expect_exit(rc, 2, "check of a damaged header")
    write("plain.db", "hello, not a database at all\n" * 10)
    rc, _, err = run(["report", "plain.db", "-o", "prep"])
    expect_exit(rc, 2, "report of a text file")


# ---- item 8: failed writes ------------------------------------------------------------


def case_full_disk():
    # A real write failure from SQLite: the file-size limit (RLIMIT_FSIZE) with SIGXFSZ
    # ignored makes write(2) fail with EFBIG once the database or its log passes 200 KiB
    # (the smoke run writes about 360 KiB).
    db = os.path.join(WORK, "full.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    smoke = os.path.join(SRC, "scenarios", "smoke.lua")
    rc, out, err = run(["run", smoke, "--seed", "1", "--db", "full.db", "--json"],
                       prefix=["bash", "-c", 'trap "" XFSZ; ulimit -f 200; exec "$@"', "bash"])
    expect_exit(rc, 3, "run on a full disk")
    summary = json.loads(out)
    if summary["verdict"] != "error":
        fail("summary verdict %s, want error" % summary["verdict"])
    for name in ("linearizability", "watch", "raft_safety", "converge", "expect"):
        if name not in summary["checks"]:
            fail("check %s vanished from the summary" % name)
    if summary["checks"]["linearizability"]["verdict"] == "pass":
        fail("linearizability passed over an incomplete history")
    rows = query(db, "SELECT verdict, reason FROM runs")
    if len(rows) != 1 or rows[0][0] not in ("error", "running"):
        fail("runs row %r, want error (or running)" % rows)
    if rows[0][0] == "error" and "write" not in (rows[0][1] or ""):
        fail("runs.reason %r does not say a write failed" % rows[0][1])
    rc, _, err = run(["check", "full.db"])
    expect_exit(rc, 2, "check of an error run")
    if "incomplete" not in err:
        fail("check does not give the reason")
    rc, _, _ = run(["report", "full.db", "-o", "frep"])
    expect_exit(rc, 0, "report of an error run")
    rep = json.load(open(os.path.join(WORK, "frep", "summary.json")))
    if rep["verdict"] not in ("error", "running"):
        fail("report shows %s" % rep["verdict"])
    junit = open(os.path.join(WORK, "frep", "junit.xml")).read()
    if "<error" not in junit:
        fail("junit has no <error> for the run")


def case_running_refused():
    db, _ = tiny_db()
    sql(db, "UPDATE runs SET verdict = 'running'")
    rc, _, err = run(["check", "t.db"])
    expect_exit(rc, 2, "check of a running run")
    if "never finished" not in err:
        fail("no reason given for the running run")
    rc, _, _ = run(["report", "t.db", "-o", "rrep"])
    expect_exit(rc, 0, "report of a running run")
    rep = json.load(open(os.path.join(WORK, "rrep", "summary.json")))
    if rep["verdict"] != "running":
        fail("report shows %s for a running run" % rep["verdict"])
    # A run killed before its end stays 'running' in the database.
    db2, _ = tiny_db("k.db")
    rows = query(db2, "SELECT verdict FROM runs")
    if rows != [("pass",)]:
        fail("a finished run reads %r" % rows)


# ---- item 9: bytes and checkers in the summary ----------------------------------------

NUL = r"""scenario { name = "nul", cluster = { nodes = 1 }, clients = { count = 1 },
           checks = { "linearizability", "watch" } }
run(1*s)
local c = client(1)
local w = c:watch("a\0", { range_end = "a\1" })
local r, err = c:put("a\0b", "x\0y\255")
expect(r ~= nil, "put of a key with a NUL", err)
local g = c:get("a\0b")
expect(g ~= nil and g.value == "x\0y\255", "the value reads back byte for byte", g and g.value)
run(1*s)
"""


def case_nul_bytes():
    db, summary = tiny_db("n.db", NUL)
    checks = summary["checks"]
    for name in ("linearizability", "watch"):
        if checks.get(name, {}).get("verdict") != "pass":
            fail("%s is %r, want pass" % (name, checks.get(name)))
    rc, _, _ = run(["check", "n.db"])
    expect_exit(rc, 0, "check of a history with NUL bytes")
    keys = query(db, "SELECT key FROM ops WHERE key IS NOT NULL AND instr(key, x'00') > 0")
    if not keys or bytes(keys[0][0]) != b"a\0b":
        fail("the key did not round-trip: %r" % keys)
    rc, _, _ = run(["report", "n.db", "-o", "nrep"])
    expect_exit(rc, 0, "report")
    page = open(os.path.join(WORK, "nrep", "index.html"), encoding="utf-8").read()
    if "a\\x00b" not in page:
        fail("the report does not show the NUL as \\x00")
    jl = ('{"op":"put","key":"a\\u0000b","value":"x\\u0000","call":1,"return":2,'
          '"status":"ok","rev":2}\n'
          '{"op":"get","key":"a\\u0000b","value":"x\\u0000","call":3,"return":4,'
          '"status":"ok","rev":2}\n'
          '{"op":"get","key":"a\\u0000b","value":"x","call":5,"return":6,"status":"ok","rev":2}\n')
    write("nul.jsonl", jl)
    rc, _, _ = run(["check", "nul.jsonl"])
    expect_exit(rc, 1, "check of a JSONL history whose last read lost the NUL byte")


NO_WATCH = """scenario { name = "nw", cluster = { nodes = 1 }, clients = { count = 1 },
           workload = { rate = 20, keys = 2 }, checks = { "linearizability", "watch" } }
run(1*s)
"""

SCRIPT_ERR = """scenario { name = "se", cluster = { nodes = 3 }, clients = { count = 1 },
           workload = { rate = 20, keys = 2 },
           checks = { "linearizability", "watch", "raft_safety", "converge" } }
run(1*s)
error("boom")
"""


def case_checks_never_vanish():
    _, summary = tiny_db("w.db", NO_WATCH)
    wc = summary["checks"].get("watch")
    if not wc or wc["verdict"] != "pass" or wc.get("note") != "no watches to judge":
        fail("watch check with no watches: %r" % wc)
    write("tiny.lua", SCRIPT_ERR)
    rc, out, _ = run(["run", "tiny.lua", "--seed", "1", "--db", "se.db", "--json"])
    expect_exit(rc, 2, "a script error")
    checks = json.loads(out)["checks"]
    for name in ("linearizability", "watch", "raft_safety", "converge"):
        if name not in checks:
            fail("asked-for check %s is missing from %r" % (name, sorted(checks)))
    if checks["converge"]["verdict"] != "unknown" or "reason" not in checks["converge"]:
        fail("converge not judged must be unknown with a reason: %r" % checks["converge"])


# ---- item 13: empty histories -------------------------------------------------------


def case_empty_history():
    write("empty.jsonl", "")
    write("blank.jsonl", "  \n\t\n\n")
    write("bom.jsonl", "\ufeff\n")
    for name in ("empty.jsonl", "blank.jsonl", "bom.jsonl", "/dev/null"):
        rc, _, err = run(["check", name])
        expect_exit(rc, 2, "check " + name)
        if "no operations" not in err:
            fail("check %s does not say 'no operations'" % name)
    # A pipe: read to its end, once (sniffing must not swallow it).
    ok = open(os.path.join(SRC, "tests", "unit", "checkers", "data", "ok.jsonl"), "rb").read()
    rc, _, _ = run(["check", "/dev/stdin"], stdin=ok)
    expect_exit(rc, 0, "check of a history on a pipe")
    rc, _, err = run(["check", "/dev/stdin"], stdin=b"")
    expect_exit(rc, 2, "check of an empty pipe")
    db, _ = tiny_db("e.db", """scenario { name = "e", cluster = { nodes = 1 } }
run(1*s)
""")
    rc, _, err = run(["check", "e.db"])
    expect_exit(rc, 2, "check of a run without operations")
    if "no operations" not in err:
        fail("no 'no operations' for an empty run")


# ---- item 14: garbage in the database's columns ----------------------------------------

GARBAGE = [
    ("UPDATE ops SET call_ns = 'abc' WHERE op_id = 3", "ops row 3 (op_id 3): call_ns is text"),
    ("UPDATE ops SET return_ns = x'0102' WHERE op_id = 4", "op_id 4): return_ns is a blob"),
    ("UPDATE ops SET revision = 2.5 WHERE op_id = 5", "op_id 5): revision is a real number"),
    ("UPDATE ops SET kind = 'frob' WHERE op_id = 6", "op_id 6): unknown op \"frob\""),
    ("UPDATE ops SET call_ns = -9223372036854775808 WHERE op_id = 7", "call_ns is an integer"),
    ("UPDATE ops SET return_ns = -5 WHERE op_id = 8", "return_ns is an integer (-5)"),
    ("UPDATE ops SET client_id = 1099511627776 WHERE op_id = 2", "client_id is an integer"),
    ("UPDATE ops SET status = 'maybe' WHERE op_id = 2", "unknown status"),
    ("UPDATE ops SET succeeded = 7 WHERE op_id = 2", "succeeded is an integer (7)"),
    ("UPDATE ops SET key = 12.5 WHERE op_id = 2", "key is a real number"),
    ("UPDATE watches SET closed_ns = 1, opened_ns = 5", "closed (1) before it was opened"),
    ("UPDATE watches SET start_rev = 'x'", "watches row 1"),
    ("UPDATE watch_events SET kind = 'zzz' WHERE seq = (SELECT min(seq) FROM watch_events)",
     "unknown event kind"),
    ("UPDATE watch_events SET mod_rev = -1", "mod_rev is an integer (-1)"),
    ("UPDATE watch_events SET watch_id = 424242", "event of watch 424242 that was never opened"),
]


def case_db_garbage():
    db, _ = tiny_db()
    for stmt, want in GARBAGE:
        shutil.copy(db, os.path.join(WORK, "g.db"))
        try:
            sql(os.path.join(WORK, "g.db"), stmt)
        except sqlite3.Error as e:
            fail("setting up %r: %s" % (stmt, e))
        rc, _, err = run(["check", "g.db"])
        expect_exit(rc, 2, stmt)
        if want not in err:
            fail("%r: message lacks %r" % (stmt, want))
        if "line 0" in err:
            fail("%r: the message says 'line 0'" % stmt)


# ---- item 15: loose JSON lines -------------------------------------------------------

PUT1 = '{"op":"put","key":"a","value":"1","call":1,"return":2,"status":"ok","rev":2%s}\n'
LOOSE = [
    (PUT1 % ',"id":1' + PUT1.replace('"call":1,"return":2', '"call":3,"return":4') % ',"id":1',
     "loose.jsonl:2: op id 1 repeats"),
    ('{"type":"watch_open","watch":1,"key":"a"}\n{"type":"watch_close","watch":1,"t":5}\n'
     '{"type":"watch_event","watch":1,"event":"put","key":"a","value":"1","mod_rev":2,"t":3}\n',
     "loose.jsonl:3: event of watch 1 after its close"),
    ('{"type":"watch_open","watch":1,"key":"a","t":1}\n'
     '{"type":"watch_event","watch":1,"event":"put","key":"a","value":"1","mod_rev":2,"t":9}\n'
     '{"type":"watch_close","watch":1,"t":5}\n',
     "loose.jsonl:3: watch 1 closed (t 5) before its event"),
    ('{"type":"watch_open","watch":1,"key":"a"}\n{"type":"watch_close","watch":1,"t":5}\n'
     '{"type":"watch_close","watch":1,"t":6}\n', "loose.jsonl:3: watch 1 closed twice"),
    (PUT1.replace('"call":1', '"call":-1') % "", 'loose.jsonl:1: "call" is negative'),
    (PUT1.replace('"rev":2', '"rev":-2') % "", 'loose.jsonl:1: "rev" is negative'),
    ('{"op":"get","key":"a","call":1,"return":2,"status":"ok","rev":2,'
     '"kvs":[{"key":"a","value":"1","mod_revision":-3}]}\n', "loose.jsonl:1: negative revision"),
    ('{"type":"watch_open","watch":1,"key":"a","start_rev":-1}\n',
     'loose.jsonl:1: "start_rev" is negative'),
]


def case_jsonl_loose():
    for text, want in LOOSE:
        write("loose.jsonl", text)
        rc, _, err = run(["check", "loose.jsonl"])
        expect_exit(rc, 2, want)
        if want not in err:
            fail("message lacks %r" % want)
    write("bom.jsonl", "\ufeff" + PUT1 % "", mode="w")
    rc, _, _ = run(["check", "bom.jsonl"])
    expect_exit(rc, 0, "a JSONL history with a UTF-8 BOM")
    rc, _, _ = run(["check", "bom.jsonl", "--format", "jsonl"])
    expect_exit(rc, 0, "a JSONL history with a BOM, --format jsonl")


# ---- read-only locations -------------------------------------------------------------


def as_reader():
    """A prefix that runs a command as an unprivileged user when we are root (root
    ignores directory permissions), or nothing."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        print("SKIP: root without setpriv")
        sys.exit(77)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def case_readonly_wal():
    db, _ = tiny_db()
    ro = os.path.join(WORK, "ro")
    if os.path.isdir(ro):
        os.chmod(ro, 0o755)
        shutil.rmtree(ro)
    os.mkdir(ro)
    shutil.copy(db, os.path.join(ro, "w.db"))
    if query(os.path.join(ro, "w.db"), "PRAGMA journal_mode") != [("wal",)]:
        fail("the copy is not in WAL mode")
    os.chmod(os.path.join(ro, "w.db"), 0o644)
    os.chmod(ro, 0o555)
    os.chmod(WORK, 0o755)
    try:
        rc, _, err = run(["check", "ro/w.db"], prefix=as_reader())
        expect_exit(rc, 0, "check of a WAL history in a read-only folder")
        rc, _, _ = run(["report", "ro/w.db", "-o", "/tmp/hist-ro-rep-%d" % os.getpid()],
                       prefix=as_reader())
        expect_exit(rc, 0, "report of a WAL history in a read-only folder")
        # With a write-ahead log holding content, say so.
        os.chmod(ro, 0o755)
        con = sqlite3.connect(os.path.join(ro, "w.db"))
        con.execute("PRAGMA wal_autocheckpoint = 0")
        con.execute("UPDATE runs SET scenario = scenario")
        con.commit()
        shutil.copy(os.path.join(ro, "w.db-wal"), os.path.join(ro, "keep-wal"))
        con.close()
        shutil.copy(os.path.join(ro, "keep-wal"), os.path.join(ro, "w.db-wal"))
        for name in ("w.db-shm",):
            if os.path.exists(os.path.join(ro, name)):
                os.remove(os.path.join(ro, name))
        os.chmod(ro, 0o555)
        rc, _, err = run(["check", "ro/w.db"], prefix=as_reader())
        if rc == 2 and "not a faultline history" in err:
            fail("a WAL history in a read-only folder is called 'not a faultline history'")
        if rc != 0 and "-wal" not in err:
            fail("check fails without naming the write-ahead log: %s" % err)
    finally:
        os.chmod(ro, 0o755)
        shutil.rmtree("/tmp/hist-ro-rep-%d" % os.getpid(), ignore_errors=True)


# ---- expect messages and observed values -------------------------------------------------

EXPECT = r"""scenario { name = "ex", cluster = { nodes = 1 } }
run(1*s)
expect(true, "bad \xff\xfe utf8", "caf\xc3\xa9")
expect(false, "msg \xc3\xa9", "a\0b")
"""


def case_expect_bytes():
    write("ex.lua", EXPECT)
    rc, out, _ = run(["run", "ex.lua", "--seed", "1", "--db", "ex.db", "--json"])
    expect_exit(rc, 1, "a failing expect")
    items = json.loads(out)["checks"]["expect"]["items"]
    if items[0]["message"] != {"hex": "62616420fffe2075746638"}:
        fail("invalid UTF-8 message not stored as bytes: %r" % items[0]["message"])
    if items[0]["observed"] != "caf\u00e9":
        fail("observed é came out as %r" % items[0]["observed"])
    if items[1]["observed"] != "a\0b":
        fail("observed NUL came out as %r" % items[1]["observed"])
    rc, _, _ = run(["report", "ex.db", "-o", "exrep"])
    expect_exit(rc, 0, "report")
    page = open(os.path.join(WORK, "exrep", "index.html"), encoding="utf-8").read()
    if "bad \\xff\\xfe utf8" not in page or "caf\u00e9" not in page:
        fail("the report does not show the bytes escaped")
    junit = open(os.path.join(WORK, "exrep", "junit.xml"), encoding="utf-8").read()
    if "msg \u00e9" not in junit or "(no message)" in junit:
        fail("junit lost the message")


# ---- seeds ---------------------------------------------------------------------------------


def case_seed_u64():
    write("tiny.lua", """scenario { name = "s", cluster = { nodes = 1 } }
run(1*s)
""")
    big = "18446744073709551615"
    rc, out, _ = run(["run", "tiny.lua", "--seed", big, "--db", "s.db", "--json"])
    expect_exit(rc, 0, "run with the largest seed")
    if json.loads(out)["seed"] != big:
        fail("summary seed %r" % json.loads(out)["seed"])
    rc, out, _ = run(["run", "tiny.lua", "--seed", big, "--db", "s.db"])
    if ("seed " + big) not in out:
        fail("the human summary does not show the seed")
    rows = query(os.path.join(WORK, "s.db"), "SELECT seed, seed_text FROM runs")
    if rows[0] != (-1, big):
        fail("runs.seed/seed_text %r" % (rows[0],))
    rc, _, _ = run(["report", "s.db", "--run", "1", "-o", "srep"])
    expect_exit(rc, 0, "report")
    if json.load(open(os.path.join(WORK, "srep", "summary.json")))["seed"] != big:
        fail("report summary.json seed")
    if ('name="seed %s"' % big) not in open(os.path.join(WORK, "srep", "junit.xml")).read():
        fail("junit seed")
    # An older database without seed_text still reads the seed back right.
    sql(os.path.join(WORK, "s.db"), "UPDATE runs SET seed_text = NULL")
    rc, _, _ = run(["report", "s.db", "--run", "1", "-o", "srep2"])
    if json.load(open(os.path.join(WORK, "srep2", "summary.json")))["seed"] != big:
        fail("seed from the INTEGER column alone")


# ---- report -o DIR ---------------------------------------------------------------------------


def case_report_symlink():
    tiny_db()
    d = os.path.join(WORK, "sym")
    shutil.rmtree(d, ignore_errors=True)
    os.mkdir(d)
    victim = write("victim.txt", "precious\n")
    for name in ("index.html", "summary.json", "junit.xml", "summary.md"):
        os.symlink(victim, os.path.join(d, name))
    rc, _, _ = run(["report", "t.db", "-o", "sym"])
    expect_exit(rc, 0, "report into a folder with planted symlinks")
    if open(victim).read() != "precious\n":
        fail("the report wrote through a symlink")
    for name in ("index.html", "summary.json"):
        if os.path.islink(os.path.join(d, name)):
            fail("%s is still a symlink" % name)


def main():
    global FL, SRC, WORK
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    case, FL, SRC, WORK = sys.argv[1:]
    FL = os.path.abspath(FL)
    if os.path.isdir(WORK):  # a fresh folder: nothing left from an earlier run
        for root, dirs, _ in os.walk(WORK):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    fn = globals().get("case_" + case)
    if not fn:
        fail("no case " + case)
    fn()
    print("ok: " + case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
