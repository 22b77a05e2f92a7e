#!/bin/sh
# target_pdeath.sh TARGET FAULTLINE SCENARIO WORKDIR: every member process a run on
# TARGET (etcd: etcd members; live: `faultline member` processes) started dies with it,
# even when faultline itself is killed with SIGKILL once the members serve (the
# supervisor's parent-death signal, harness/live/live.h). Skips (77) without etcd.
target=$1; fl=$2; scn=$3; work=$4
case $target in
etcd) members="$work/members" ;; # its data directory is on every member's command line
live) members="member --id .* --data $work/members" ;;
*) echo "target_pdeath.sh: TARGET is etcd or live, not '$target'" >&2; exit 2 ;;
esac
if [ "$target" = etcd ] && [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
# Whether the members serve: etcd's first says so in its log; ours each name a leader.
serving() {
    if [ "$target" = etcd ]; then
        grep -qs "serving client" "$work/members/m0.log"
    else
        grep -qs '"leader"' "$work/members/m1/events.jsonl" "$work/members/m2/events.jsonl" \
            "$work/members/m3/events.jsonl"
    fi
}
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target "$target" --db "$work/h.db" --workdir "$work/members" > /dev/null 2>&1 &
pid=$!
i=0
until [ "$(pgrep -f "$members" | wc -l)" -ge 3 ] && serving; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "FAIL: the members never started"; kill -9 $pid; exit 1; }
    sleep 0.1
done
echo "members running: $(pgrep -f "$members" | wc -l)"
kill -9 $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$work/members" > /dev/null; do
    i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: left after SIGKILL:"; pgrep -af "$work/members"; exit 1; }
    sleep 0.1
done
# the members' data (etcd preallocates 64 MB WAL files: ~370 MB a run) only kept on failure
rm -rf "$work/members"
echo ok
