#!/bin/sh
# refuse.sh FAULTLINE WORKDIR: on --target etcd, a scenario function the target cannot
# do stops the run at its line with the function's name and the target (exit 2), and
# a nemesis of such kinds likewise. Skips (77) without etcd.
fl=$1; work=$2
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
mkdir -p "$work" && cd "$work" || exit 1
check() { # name, lua body, expected message
    printf 'scenario { cluster = { nodes = 1 }, clients = { count = 1 } }\nrun(100*ms)\n%s\n' "$2" > "$1.lua"
    out=$("$fl" run "$1.lua" --target etcd --db "$1.db" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 2 ] || { echo "FAIL $1: exit $rc, want 2"; exit 1; }
    echo "$out" | grep -qF -- "$3" || { echo "FAIL $1: no '$3'"; exit 1; }
}
check skew 'skew(1, 2)' "skew.lua:3: skew: not available on --target etcd: etcd's Go runtime"
check failpoint 'failpoint("raft/before_save", { node = 1, action = "crash" })' "failpoint: not available on --target etcd"
check bug 'bug("raft.vote_ignores_log")' "bug: not available on --target etcd"
check pcall 'local ok = pcall(skew, 1, 2)' "pcall.lua:3: skew: not available on --target etcd"
check nemesis 'nemesis { kinds = { "skew" }, every = 1*s }' "nemesis: only kinds partition, kill and pause"
# the same scenario runs on the simulator (the functions exist there)
"$fl" run skew.lua --db sim.db > /dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: skew.lua on the simulator exit $rc"; exit 1; }
echo ok
