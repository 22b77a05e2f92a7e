#!/usr/bin/env python3
"""lease_expire_recorded.py FAULTLINE SCENARIO DB: a lease the cluster expires is one
system op in the history (client 0, kind lease_revoke, its keys, the revision of the
deletes, status ok), however many members apply it or replay it after a restart."""
import json, os, re, sqlite3, subprocess, sys

bin_, scn, db = sys.argv[1:4]
for sfx in ("", "-wal", "-shm"):
    if os.path.exists(db + sfx):
        os.unlink(db + sfx)
p = subprocess.run([bin_, "run", scn, "--seed", "1", "--db", db, "--json"],
                   capture_output=True, text=True, timeout=120)
errors = []
if p.returncode != 0:
    errors.append("exit %d: %s" % (p.returncode, p.stderr))
m = re.search(r"delete revision\s+(\d+)", p.stderr)
con = sqlite3.connect(db)
rows = con.execute("SELECT client_id, kind, request, response, status, revision FROM ops "
                   "WHERE kind = 'lease_revoke' AND client_id = 0 ORDER BY op_id").fetchall()
events = con.execute("SELECT count(*) FROM node_events WHERE kind = 'lease_end'").fetchone()[0]
con.close()
if len(rows) != 1:
    errors.append("%d system lease_revoke ops, want 1" % len(rows))
elif m:
    cid, kind, rq, rs, status, rev = rows[0]
    rq, rs = json.loads(rq), json.loads(rs)
    if cid != 0 or status != "ok" or not rq.get("system"):
        errors.append("not a system op: %r" % (rows[0],))
    if sorted(rq.get("keys", [])) != ["le/a", "le/b"]:
        errors.append("keys %r" % rq.get("keys"))
    if rev != int(m.group(1)) or rs["header"]["revision"] != rev:
        errors.append("revision %r / %r, the watch saw %s" % (rev, rs, m.group(1)))
else:
    errors.append("the scenario printed no delete revision")
if events < 4:
    errors.append("only %d lease_end node events (3 members + a replay expected)" % events)
for e in errors:
    print("FAIL:", e)
print("%d lease_end events, %d system lease_revoke ops" % (events, len(rows)))
sys.exit(1 if errors else 0)
