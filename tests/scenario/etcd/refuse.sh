#!/bin/sh
# refuse.sh FAULTLINE WORKDIR: on --target etcd, a scenario function the target cannot
# do stops the run at its line with the function's name and the target (exit 2), and
# a nemesis of such kinds likewise; a cluster option etcd 3.4 has no flag for
# (snapshot_catchup) stops it at the scenario's line before any member starts. The
# runs are independent (each claims its own ports), so they run at once. Skips (77)
# without etcd.
fl=$1; work=$2
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
names=""
start() { # name, lua body, expected message[, cluster table]
    printf 'scenario { cluster = %s, clients = { count = 1 } }\nrun(100*ms)\n%s\n' \
        "${4:-{ nodes = 1 \}}" "$2" > "$1.lua"
    printf '%s\n' "$3" > "$1.want"
    ( "$fl" run "$1.lua" --target etcd --db "$1.db" > "$1.out" 2>&1; echo $? > "$1.rc" ) &
    names="$names $1"
}
start skew 'skew(1, 2)' "skew.lua:3: skew: not available on --target etcd: etcd's Go runtime"
start failpoint 'failpoint("mvcc/before_commit", { node = 1, action = "delay", delay_ms = 10 })' "failpoint.lua:3: failpoint: 'mvcc/before_commit' delay: not available on --target etcd: Debian's etcd is built without gofail"
start fp_action 'failpoint("raft/after_save", { node = 1, action = "delay", delay_ms = 10 })' "fp_action.lua:3: failpoint: 'raft/after_save' delay: not available on --target etcd: raft/before_save takes delay or crash"
start fp_pcall 'local ok = pcall(failpoint, "raft/before_save", { node = 1, action = "delay", delay_ms = 10, p = 0.5 })' "fp_pcall.lua:3: failpoint: 'raft/before_save' delay: not available on --target etcd: p, count and skip are not carried"
start bug 'bug("raft.vote_ignores_log")' "bug: not available on --target etcd"
start pcall 'local ok = pcall(skew, 1, 2)' "pcall.lua:3: skew: not available on --target etcd"
start nemesis 'nemesis { kinds = { "skew" }, every = 1*s }' "nemesis: only kinds partition, kill and pause"
etcd_v=$("${FL_ETCD:-etcd}" --version 2>/dev/null | sed -n 's/^etcd Version: //p')
case "$etcd_v" in
3.4.*) start catchup 'run(100*ms)' \
           "catchup.lua:1: cannot set up the cluster: cluster.snapshot_catchup = 200: cannot run on etcd $etcd_v: needs --snapshot-catchup-entries" \
           '{ nodes = 1, snapshot_catchup = 200 }' ;;
esac
# the same scenario runs on the simulator (the functions exist there)
"$fl" run skew.lua --db sim.db > /dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: skew.lua on the simulator exit $rc"; exit 1; }
wait
for n in $names; do
    cat "$n.out"
    rc=$(cat "$n.rc")
    [ "$rc" = 2 ] || { echo "FAIL $n: exit $rc, want 2"; exit 1; }
    grep -qF -- "$(cat "$n.want")" "$n.out" || { echo "FAIL $n: no '$(cat "$n.want")'"; exit 1; }
done
echo ok
