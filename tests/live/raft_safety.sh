#!/bin/sh
# raft_safety.sh FAULTLINE WANT SCENARIO WORKDIR [BUG]: SCENARIO on --target live (with
# `--bug BUG` when given) and its raft_safety check, judged by replaying the member
# processes' Raft feeds (DIR/raft_feed.txt) into the checker. WANT pass: the run passes
# (exit 0) and raft_safety passes having checked elections, appends, commits, applies and
# a restart. WANT fail: raft_safety fails with the checker's violation (exit 1). Skips
# (77) without python3.
fl=$1; want=$2; scn=$3; work=$4; bug=$5
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
if [ -n "$bug" ]; then
    "$fl" run "$scn" --target live --json --db "$work/h.db" --workdir "$work/members" --keep \
        --bug "$bug" > "$work/out.json"
else
    "$fl" run "$scn" --target live --json --db "$work/h.db" --workdir "$work/members" --keep \
        > "$work/out.json"
fi
rc=$?
python3 - "$work" "$want" "$rc" <<'PY' || exit 1
import json, sys
work, want, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(work + "/out.json"))
rs = s["checks"].get("raft_safety")
print("exit", rc, "verdict", s["verdict"], "raft_safety", json.dumps(rs))
assert rs is not None, s["checks"].keys()
assert "raft_safety" not in (s.get("not_on_target") or []), s.get("not_on_target")
lines = sum(1 for _ in open(work + "/members/raft_feed.txt"))
assert rs["feed_lines"] == lines and lines > 0, (rs["feed_lines"], lines)
if want == "pass":
    assert rc == 0 and s["verdict"] == "pass", (rc, s["verdict"])
    assert rs["verdict"] == "pass" and rs["violation"] is None, rs
    c = rs["checked"][0]
    for k in ("leaders", "appends", "commits", "applies", "votes", "elections", "restarts"):
        assert c[k] > 0, (k, c)
else:
    assert rs["verdict"] == "fail" and rs["violation"], rs
    assert rc == 1 and s["verdict"] == "fail", (rc, s["verdict"])
print("ok")
PY
rm -rf "$work"
