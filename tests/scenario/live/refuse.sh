#!/bin/sh
# refuse.sh FAULTLINE WORKDIR: on --target live, a scenario function the target cannot
# do stops the run at its line with the function's name and the target (exit 2), a
# nemesis of such kinds likewise (bug() too: the member processes take `run --bug` at
# their start, live4.cmake tests it; on etcd --bug is a usage error). The human summary
# of such a run says the target and that it has no digest.
fl=$1; work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
check() { # name, lua body, expected message
    printf 'scenario { cluster = { nodes = 1 }, clients = { count = 1 } }\nrun(100*ms)\n%s\n' "$2" > "$1.lua"
    out=$("$fl" run "$1.lua" --target live --db "$1.db" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 2 ] || { echo "FAIL $1: exit $rc, want 2"; exit 1; }
    echo "$out" | grep -qF -- "$3" || { echo "FAIL $1: no '$3'"; exit 1; }
}
check failpoint 'failpoint("disk/fsync_eio", { node = 1, action = "error" })' "failpoint 'disk/fsync_eio': not available on --target live"
echo "$out" | grep -qF "digest: none (target live: a live run is not deterministic)" ||
    { echo "FAIL: the summary does not say live without a digest"; exit 1; }
check bug 'bug("raft.vote_ignores_log")' "bug.lua:3: bug: not available on --target live"
check hold 'hold()' "hold: not available on --target live: holding frames"
check on 'on("leader", function() end)' "on: not available on --target live"
check pcall 'local ok = pcall(bug, "raft.vote_ignores_log")' "pcall.lua:3: bug: not available on --target live"
check nemesis 'nemesis { kinds = { "membership" }, every = 1*s }' "nemesis: only kinds partition, kill and pause are available on --target live"
# the same failpoint scenario runs on the simulator (the function exists there)
"$fl" run failpoint.lua --db sim.db > /dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || { echo "FAIL: failpoint.lua on the simulator exit $rc"; exit 1; }
echo ok
