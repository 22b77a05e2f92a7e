#!/bin/sh
# pdeath.sh FAULTLINE SCENARIO WORKDIR: every member process a --target live run started
# dies with it, even when faultline itself is killed with SIGKILL (the supervisor's
# parent-death signal, harness/live/live.h).
fl=$1; scn=$2; work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target live --db "$work/h.db" --workdir "$work/members" > /dev/null 2>&1 &
pid=$!
i=0
until [ "$(pgrep -f "member --id .* --data $work/members" | wc -l)" -ge 3 ] &&
      grep -qs '"leader"' "$work/members/m1/events.jsonl" "$work/members/m2/events.jsonl" \
          "$work/members/m3/events.jsonl"; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "FAIL: the members never started"; kill -9 $pid; exit 1; }
    sleep 0.1
done
echo "members running: $(pgrep -f "member --id .* --data $work/members" | wc -l)"
kill -9 $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$work/members" > /dev/null; do
    i=$((i + 1)); [ $i -gt 50 ] && { echo "FAIL: left after SIGKILL:"; pgrep -af "$work/members"; exit 1; }
    sleep 0.1
done
echo ok
