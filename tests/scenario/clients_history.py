#!/usr/bin/env python3
"""clients_history.py FAULTLINE SRC WORKDIR: the clients' own figures go into the history
(issue 14 §3). A run's --json `clients` equals the `clients` rows of its database (stats
without attempts), each row carries the client's last attempts, the report's
summary.json shows the same objects, a sweep's merged database keeps the rows, and a
database written before the table existed still reports (figures derived from ops)."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

fl, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
scn = os.path.join(src, "scenarios/seeds/balancer-kill.lua")


def run(*args, ok=(0,)):
    p = subprocess.run([fl, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode in ok, (args, p.returncode, p.stderr[-2000:])
    return p


db = os.path.join(work, "run.db")
summary = json.loads(run("run", scn, "--seed", "2", "--db", db, "--json").stdout)
con = sqlite3.connect(db)
rows = con.execute("select client_id, balancer, stats, attempts from clients where run_id = 1"
                   " order by client_id").fetchall()
assert len(rows) == len(summary["clients"]) == 4, (len(rows), len(summary["clients"]))
for (cid, bal, stats, attempts), live in zip(rows, summary["clients"]):
    st = json.loads(stats)
    assert st == live, (cid, st, live)
    assert cid == live["id"] and bal == live["balancer"]
    assert len(st["endpoints"]) == 3 and all(
        e["state"] in ("idle", "connecting", "ready", "closed") for e in st["endpoints"])
    att = json.loads(attempts)
    assert 0 < len(att) <= 128 and len(att) <= st["attempts"], (len(att), st["attempts"])
    assert all(a["outcome"] in ("ok", "error", "transport", "timeout", "abandoned",
                                "canceled", "outstanding") for a in att)
    assert [a["at_ns"] for a in att] == sorted(a["at_ns"] for a in att)
# the report's summary.json: the same client objects
out = os.path.join(work, "report")
run("report", db, "-o", out)
rep = json.load(open(os.path.join(out, "summary.json")))
rep = rep if isinstance(rep, dict) else rep[0]
assert rep["clients"] == summary["clients"], "report clients differ from the run's"
html = open(os.path.join(out, "index.html")).read()
assert "endpoints and the last" in html and "Derived from the recorded operations" not in html
# a sweep's merged database keeps the rows
sdb = os.path.join(work, "sweep.db")
run("sweep", scn, "--seeds", "1..3", "-j", "2", "--db", sdb)
con = sqlite3.connect(sdb)
n = con.execute("select count(*), count(distinct run_id) from clients").fetchone()
assert n == (12, 3), n
# an older database: no clients table; the report derives the figures from the ops
old = os.path.join(work, "old.db")
shutil.copy(db, old)
con = sqlite3.connect(old)
con.execute("drop table clients")
con.commit()
con.close()
out2 = os.path.join(work, "report-old")
run("report", old, "-o", out2)
assert "Derived from the recorded operations" in open(os.path.join(out2, "index.html")).read()
run("check", old)
print("ok")
