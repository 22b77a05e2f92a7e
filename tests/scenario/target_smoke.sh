#!/bin/sh
# target_smoke.sh TARGET FAULTLINE SCENARIO WORKDIR: the smoke of a target whose members
# are real processes (issue 16): TARGET etcd (a real etcd cluster) or live (each member
# a `faultline member` process). Runs the scenario on it and checks: exit 0, verdict
# pass with linearizability, watch and every expect passing, the summary and the runs
# row saying the target with no digest, the faults applied, four balancers, watch
# events recorded, the members' logs (etcd) or data directories (live) under --workdir,
# and no process of the run left afterwards. etcd also: converge judged by HashKV of
# the three members at one revision and at checkpoints, etcd's version, leader changes
# seen by polling and campaigns read from the members' logs. live also: a pause and a
# skew applied, and the members' own node events (leaders, the killed member's
# restart, the skew). Skips (77) without python3's sqlite3, or etcd and etcdctl.
target=$1; fl=$2; scn=$3; work=$4
case $target in
etcd | live) ;;
*) echo "target_smoke.sh: TARGET is etcd or live, not '$target'" >&2; exit 2 ;;
esac
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
python3 -c 'import sqlite3' 2>/dev/null || { echo "skipped: python3 has no sqlite3"; exit 77; }
if [ "$target" = etcd ]; then
    [ -n "$FL_ETCD" ] || command -v etcd >/dev/null 2>&1 ||
        { echo "skipped: etcd not installed"; exit 77; }
    [ -n "$FL_ETCDCTL" ] || command -v etcdctl >/dev/null 2>&1 ||
        { echo "skipped: etcdctl not installed (restore and converge run it)"; exit 77; }
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target "$target" --db "$work/h.db" --workdir "$work/members" --json \
    > "$work/out.json" 2> "$work/err.txt"
rc=$?
cat "$work/err.txt"
python3 - "$target" "$work" "$rc" <<'PY' || exit 1
import json, sqlite3, sys
target, work, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
etcd = target == "etcd"
s = json.load(open(work + "/out.json"))
checks = {k: v["verdict"] for k, v in s["checks"].items()}
print("verdict", s["verdict"], "checks", checks, "ops", s["ops"], "wall_ms", s["wall_ms"])
bad = [e["message"] for e in s["checks"]["expect"]["items"] if e["verdict"] != "pass"]
assert rc == 0, "exit %d %s" % (rc, bad)
assert s["verdict"] == "pass", s["verdict"]
assert checks.get("linearizability") == "pass" and checks.get("watch") == "pass", checks
assert s["checks"]["expect"]["failed"] == 0, bad
assert s["checks"]["expect"]["total"] >= (5 if etcd else 12), s["checks"]["expect"]["total"]
assert s["target"] == target and s["digest"] is None, (s["target"], s["digest"])
assert s["ops"]["ok"] >= 50, s["ops"]
kinds = [f["kind"] for f in s["faults"]]
for k in ("partition", "kill", "restart") + (() if etcd else ("pause", "resume", "skew")):
    assert k in kinds, (k, kinds)
assert len(s["clients"]) == 4 and {c["balancer"] for c in s["clients"]} == {
    "round_robin", "pinned_random", "pinned_blacklist", "health_aware"}
db = sqlite3.connect(work + "/h.db")
opts, digest, verdict = db.execute("select options, digest, verdict from runs").fetchone()
o = json.loads(opts)
assert o["target"] == target, opts
assert digest is None and verdict == "pass", (digest, verdict)
n_ev = db.execute("select count(*) from watch_events where kind != 'progress'").fetchone()[0]
assert n_ev > 0, "no watch events recorded"
ev = dict(db.execute("select kind, count(*) from node_events group by kind").fetchall())
print("node_events", ev)
if etcd:
    assert s["etcd_version"].startswith("3.") and o["etcd_version"] == s["etcd_version"], opts
    # converge is judged on etcd: HashKV of the three members at one revision ...
    conv = s["checks"].get("converge", {})
    assert conv.get("verdict") == "pass", conv
    hashes = {m["hash"] for m in conv["state"]["members"]}
    assert len(conv["state"]["members"]) == 3 and len(hashes) == 1, conv
    assert "converge" not in s.get("not_on_target", []), s.get("not_on_target")
    # ... and at checkpoints during the run (every 2 s), with no mismatch
    assert conv.get("hash_compared", 0) >= 1 and conv.get("corruption") is None, conv
    # leader changes seen by polling; Raft role changes read from the members' logs
    assert ev.get("leader", 0) >= 2 and ev.get("campaign", 0) >= 2, ev
else:
    assert "faultline" in s["member_version"], s.get("member_version")
    # the members' own event files: a leader at start, a new one after the partition,
    # the killed member's restart (incarnation 1), the skew applied by SIGUSR1
    assert ev.get("leader", 0) >= 2 and ev.get("restart", 0) >= 1 and ev.get("skew", 0) >= 1, ev
PY
if [ "$target" = etcd ]; then
    for m in m0 m1 m2; do
        grep -q "etcd" "$work/members/$m.log" || { echo "FAIL: no log of $m"; exit 1; }
    done
else
    for m in m1 m2 m3; do
        [ -s "$work/members/$m/incarnation" ] || { echo "FAIL: no data directory of $m"; exit 1; }
    done
fi
sleep 0.2
if pgrep -f "$work/members" > /dev/null; then
    echo "FAIL: processes of the run left:"; pgrep -af "$work/members"; exit 1
fi
# the members' data (etcd preallocates 64 MB WAL files: ~370 MB a run) only kept on failure
rm -rf "$work/members"
echo ok
