#!/usr/bin/env python3
"""node_events_history.py FAULTLINE SRC WORKDIR: node events' typed fields are stored in
the history (issue 14 §4): columns peer, log_index, from_state, to_state, reason, pre of
node_events, NULL where an event has none, the detail text unchanged beside them. A
database written before the columns existed still reports (they read as NULL), and a new
run recorded into it adds the columns and fills them for its own rows."""
import os
import shutil
import sqlite3
import subprocess
import sys

fl, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
scn = os.path.join(src, "tests/scenario/mstate/typed_events.lua")
TYPED = ("peer", "log_index", "from_state", "to_state", "reason", "pre")


def run(*args, ok=(0,)):
    p = subprocess.run([fl, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode in ok, (args, p.returncode, p.stderr[-2000:])
    return p


db = os.path.join(work, "run.db")
run("run", scn, "--seed", "1", "--db", db)
con = sqlite3.connect(db)
q = "select kind, peer, log_index, from_state, to_state, reason, pre, detail from node_events" \
    " where run_id = ?1 and kind = ?2 order by at_ns, seq"
leaders = con.execute(q, (1, "leader")).fetchall()
assert leaders and all(r[3] == "candidate" and r[4] == "leader" and r[2] >= 1 and r[1] is None
                       and r[5] is None and r[6] is None and r[7].startswith("elected leader at term")
                       for r in leaders), leaders
votes = con.execute(q, (1, "vote_granted")).fetchall()
assert votes and all(r[1] is not None and r[6] in (0, 1) and r[7].endswith("peer=%d" % r[1])
                     for r in votes), votes
assert {r[6] for r in votes} == {0, 1}, votes
terms = con.execute(q, (1, "term")).fetchall()
assert terms and all(r[5] in ("campaign", "higher_term") for r in terms), terms
cc = con.execute(q, (1, "conf_change")).fetchall()
assert any(r[5] == "add_learner" and r[1] == 4 and r[2] > 0 for r in cc), cc
sd = con.execute(q, (1, "step_down")).fetchall()
assert any(r[5] == "check_quorum" and r[3] == "leader" and r[4] == "follower" for r in sd), sd
# events without typed facts keep NULLs (a vote's pre is 0/1, never NULL; others NULL)
for kind, *vals in con.execute("select kind, peer, log_index, from_state, to_state, reason, pre"
                               " from node_events where kind in ('restart', 'pause', 'crash')"):
    assert all(v is None for v in vals), (kind, vals)
con.close()

# an older database: the same rows without the typed columns
old = os.path.join(work, "old.db")
shutil.copy(db, old)
con = sqlite3.connect(old)
for c in TYPED:
    con.execute("alter table node_events drop column %s" % c)
con.commit()
con.close()
run("report", old, "-o", os.path.join(work, "report-old"))
assert os.path.exists(os.path.join(work, "report-old", "index.html")) or \
    os.listdir(os.path.join(work, "report-old")), "no report"
# a new run into it adds the columns; the old run's rows read NULL, the new one's are typed
run("run", scn, "--seed", "2", "--db", old)
con = sqlite3.connect(old)
cols = [r[1] for r in con.execute("pragma table_info(node_events)")]
assert all(c in cols for c in TYPED), cols
n_old = con.execute("select count(*) from node_events where run_id = 1 and"
                    " (from_state is not null or reason is not null or pre is not null)").fetchone()[0]
n_new = con.execute("select count(*) from node_events where run_id = 2 and kind = 'leader'"
                    " and to_state = 'leader'").fetchone()[0]
assert n_old == 0 and n_new >= 1, (n_old, n_new)
run("report", old, "-o", os.path.join(work, "report-both"))
print("ok")
