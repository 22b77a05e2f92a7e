#!/bin/sh
# smoke.sh FAULTLINE SCENARIO WORKDIR: the etcd target's live smoke (issue 16). Runs
# the scenario on a real etcd cluster and checks: exit 0, verdict pass with
# linearizability, watch and every expect passing, the summary and runs row saying
# target etcd with etcd's version and no digest, the members' logs under --workdir,
# and no etcd process of the run left afterwards. Skips (77) without etcd.
fl=$1; scn=$2; work=$3
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
if [ -z "$FL_ETCDCTL" ] && ! command -v etcdctl >/dev/null 2>&1; then
    echo "skipped: etcdctl not installed (restore and converge run it)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target etcd --db "$work/h.db" --workdir "$work/members" --json \
    > "$work/out.json" 2> "$work/err.txt"
rc=$?
cat "$work/err.txt"
python3 - "$work" "$rc" <<'PY' || exit 1
import json, sqlite3, sys
work, rc = sys.argv[1], int(sys.argv[2])
s = json.load(open(work + "/out.json"))
checks = {k: v["verdict"] for k, v in s["checks"].items()}
print("verdict", s["verdict"], "checks", checks, "ops", s["ops"], "wall_ms", s["wall_ms"])
assert rc == 0, "exit %d" % rc
assert s["verdict"] == "pass", s["verdict"]
assert checks.get("linearizability") == "pass" and checks.get("watch") == "pass", checks
# converge is judged on etcd: HashKV of the three members at one revision
conv = s["checks"].get("converge", {})
assert conv.get("verdict") == "pass", conv
hashes = {m["hash"] for m in conv["state"]["members"]}
assert len(conv["state"]["members"]) == 3 and len(hashes) == 1, conv
assert "converge" not in s.get("not_on_target", []), s.get("not_on_target")
# ... and at checkpoints during the run (every 2 s), with no mismatch
assert conv.get("hash_compared", 0) >= 1 and conv.get("corruption") is None, conv
assert s["checks"]["expect"]["failed"] == 0 and s["checks"]["expect"]["total"] >= 5
assert s["target"] == "etcd" and s["etcd_version"].startswith("3."), s.get("etcd_version")
assert s["digest"] is None, s["digest"]
assert s["ops"]["ok"] >= 50, s["ops"]
kinds = [f["kind"] for f in s["faults"]]
assert "partition" in kinds and "kill" in kinds and "restart" in kinds, kinds
assert len(s["clients"]) == 4 and {c["balancer"] for c in s["clients"]} == {
    "round_robin", "pinned_random", "pinned_blacklist", "health_aware"}
db = sqlite3.connect(work + "/h.db")
opts, digest, verdict = db.execute("select options, digest, verdict from runs").fetchone()
o = json.loads(opts)
assert o["target"] == "etcd" and o["etcd_version"] == s["etcd_version"], opts
assert digest is None and verdict == "pass", (digest, verdict)
n_ev = db.execute("select count(*) from watch_events where kind != 'progress'").fetchone()[0]
assert n_ev > 0, "no watch events recorded"
leaders = db.execute("select count(*) from node_events where kind = 'leader'").fetchone()[0]
assert leaders >= 2, "leader changes seen by polling: %d" % leaders
# Raft role changes read from the members' logs: the elections' campaigns
camp = db.execute("select count(*) from node_events where kind = 'campaign'").fetchone()[0]
assert camp >= 2, "campaigns read from the members' logs: %d" % camp
PY
for m in m0 m1 m2; do
    grep -q "etcd" "$work/members/$m.log" || { echo "FAIL: no log of $m"; exit 1; }
done
sleep 0.2
if pgrep -f "$work/members" > /dev/null; then
    echo "FAIL: processes of the run left:"; pgrep -af "$work/members"; exit 1
fi
# members' data (etcd preallocates 64 MB WAL files: ~370 MB a run) only kept on failure
rm -rf "$work/members"
echo ok
