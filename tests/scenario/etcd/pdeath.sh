#!/bin/sh
# pdeath.sh FAULTLINE SCENARIO WORKDIR: every etcd member a run started dies with it,
# even when faultline itself is killed with SIGKILL (the supervisor's parent-death
# signal, harness/live/live.h). Skips (77) without etcd.
fl=$1; scn=$2; work=$3
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target etcd --db "$work/h.db" --workdir "$work/members" > /dev/null 2>&1 &
pid=$!
i=0
until [ "$(pgrep -f "$work/members" | wc -l)" -ge 3 ] && grep -qs "serving client" "$work/members/m0.log"; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "FAIL: the members never started"; kill -9 $pid; exit 1; }
    sleep 0.1
done
echo "members running: $(pgrep -f "$work/members" | wc -l)"
kill -9 $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$work/members" > /dev/null; do
    i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: left after SIGKILL:"; pgrep -af "$work/members"; exit 1; }
    sleep 0.1
done
# members' data (etcd preallocates 64 MB WAL files: ~370 MB a run) only kept on failure
rm -rf "$work/members"
echo ok
