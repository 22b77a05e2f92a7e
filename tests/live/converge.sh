#!/bin/sh
# converge.sh FAULTLINE WORKDIR: tests/live/converge_live.lua on --target live. The
# converge check passes, judged by HashKV on every member (hash_compared 3, one hash);
# raft_safety passes, judged from the members' Raft feeds (so the run passes: exit 0).
fl=$1; work=$2; here=$(dirname "$0")
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$here/converge_live.lua" --target live --json --db "$work/h.db" \
    --workdir "$work/members" > "$work/out.json"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc, not 0 (pass)"; cat "$work/out.json"; exit 1; }
python3 - "$work/out.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
c = s["checks"]
cv, rs = c.get("converge"), c.get("raft_safety")
assert cv and cv["verdict"] == "pass", cv
assert cv["hash_compared"] == 3, cv
hashes = {m.get("hash") for m in cv["state"]["members"]}
assert len(cv["state"]["members"]) == 3 and len(hashes) == 1 and None not in hashes, cv
assert rs and rs["verdict"] == "pass" and rs["violation"] is None, rs
assert rs["checked"] and rs["checked"][0]["applies"] > 0, rs
assert c["linearizability"]["verdict"] == "pass" and c["expect"]["verdict"] == "pass", c
assert "raft_safety" not in (s.get("not_on_target") or []), s.get("not_on_target")
print("ok")
PY
rm -rf "$work"
