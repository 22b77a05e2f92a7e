#!/bin/sh
# live_check.sh FAULTLINE CHECK WANT SCENARIO WORKDIR [BUG]: SCENARIO on --target live
# (with `--bug BUG` when given) and one of its checks, judged on the member processes.
# CHECK raft_safety: the processes' Raft feeds (DIR/raft_feed.txt) replayed into the
# checker; WANT pass: the run passes (exit 0) and raft_safety passes having checked
# elections, votes, appends, commits, applies and a restart; WANT fail: it fails with the
# checker's violation (exit 1). CHECK liveness: judged as on the simulator from the
# processes' fault timeline, their leader events and the history; WANT pass: it passes
# with its after_heal window judged and passing (exit 0); WANT fail: its failover rule
# fails (exit 1). Skips (77) without python3.
fl=$1; check=$2; want=$3; scn=$4; work=$5; bug=$6
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
set -- run "$scn" --target live --json --db "$work/h.db" --workdir "$work/members" --keep
[ -n "$bug" ] && set -- "$@" --bug "$bug"
"$fl" "$@" > "$work/out.json"
rc=$?
python3 - "$work" "$check" "$want" "$rc" <<'PY' || exit 1
import json, sys
work, check, want, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = json.load(open(work + "/out.json"))
c = s["checks"].get(check)
print("exit", rc, "verdict", s["verdict"], check, json.dumps(c))
assert c is not None, s["checks"].keys()
assert check not in (s.get("not_on_target") or []), s.get("not_on_target")
assert c["verdict"] == want, (want, c["verdict"])
assert rc == (0 if want == "pass" else 1) and s["verdict"] == want, (rc, s["verdict"])
text = json.dumps(c)
if check == "raft_safety":
    lines = sum(1 for _ in open(work + "/members/raft_feed.txt"))
    assert c["feed_lines"] == lines and lines > 0, (c["feed_lines"], lines)
    if want == "pass":
        assert c["violation"] is None, c
        for k in ("leaders", "appends", "commits", "applies", "votes", "elections", "restarts"):
            assert c["checked"][0][k] > 0, (k, c["checked"])
    else:
        assert c["violation"], c
elif want == "pass":
    assert '"rule": "after_heal", "result": "pass"' in text, text
else:
    assert "failover" in text, text
print("ok")
PY
rm -rf "$work"
