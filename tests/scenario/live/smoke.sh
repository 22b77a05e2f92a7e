#!/bin/sh
# smoke.sh FAULTLINE SCENARIO WORKDIR: the live target's smoke (issue 16 §2). Runs the
# scenario with --target live (each member a `faultline member` process) and checks:
# exit 0, verdict pass with linearizability, watch and every expect passing, the
# summary and the runs row saying target live with no digest, the faults applied, the
# members' own node events recorded, their data and logs under --workdir, and no
# process of the run left afterwards. Skips (77) where loopback TCP or python3's
# sqlite3 is missing.
fl=$1; scn=$2; work=$3
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skipped: python3 has no sqlite3"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target live --db "$work/h.db" --workdir "$work/members" --json \
    > "$work/out.json" 2> "$work/err.txt"
rc=$?
cat "$work/err.txt"
python3 - "$work" "$rc" <<'PY' || exit 1
import json, sqlite3, sys
work, rc = sys.argv[1], int(sys.argv[2])
s = json.load(open(work + "/out.json"))
checks = {k: v["verdict"] for k, v in s["checks"].items()}
print("verdict", s["verdict"], "checks", checks, "ops", s["ops"], "wall_ms", s["wall_ms"])
bad = [e["message"] for e in s["checks"]["expect"]["items"] if e["verdict"] != "pass"]
assert rc == 0, "exit %d %s" % (rc, bad)
assert s["verdict"] == "pass", s["verdict"]
assert checks.get("linearizability") == "pass" and checks.get("watch") == "pass", checks
assert s["checks"]["expect"]["failed"] == 0 and s["checks"]["expect"]["total"] >= 12, bad
assert s["target"] == "live" and "faultline" in s["member_version"], s.get("member_version")
assert s["digest"] is None, s["digest"]
assert s["ops"]["ok"] >= 50, s["ops"]
kinds = [f["kind"] for f in s["faults"]]
for k in ("partition", "kill", "restart", "pause", "resume", "skew"):
    assert k in kinds, (k, kinds)
assert len(s["clients"]) == 4 and {c["balancer"] for c in s["clients"]} == {
    "round_robin", "pinned_random", "pinned_blacklist", "health_aware"}
db = sqlite3.connect(work + "/h.db")
opts, digest, verdict = db.execute("select options, digest, verdict from runs").fetchone()
o = json.loads(opts)
assert o["target"] == "live", opts
assert digest is None and verdict == "pass", (digest, verdict)
n_ev = db.execute("select count(*) from watch_events where kind != 'progress'").fetchone()[0]
assert n_ev > 0, "no watch events recorded"
ev = dict(db.execute("select kind, count(*) from node_events group by kind").fetchall())
print("node_events", ev)
# the members' own event files: a leader at start, a new one after the partition, the
# killed member's restart (incarnation 1), the skew applied by SIGUSR1
assert ev.get("leader", 0) >= 2 and ev.get("restart", 0) >= 1 and ev.get("skew", 0) >= 1, ev
PY
for m in m1 m2 m3; do
    [ -s "$work/members/$m/incarnation" ] || { echo "FAIL: no data directory of $m"; exit 1; }
done
sleep 0.2
if pgrep -f "$work/members" > /dev/null; then
    echo "FAIL: processes of the run left:"; pgrep -af "$work/members"; exit 1
fi
echo ok
