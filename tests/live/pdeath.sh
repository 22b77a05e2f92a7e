#!/bin/sh
# Member processes die with the harness even when it gets SIGKILL (issue 16 §2): the
# test program starts three `faultline member` processes under the live supervisor,
# is killed with SIGKILL, and every member must be gone within 5 s.
# usage: pdeath.sh TEST_MEMBER FAULTLINE WORKDIR
set -u
t=$1; bin=$2; work=$3
rm -rf "$work"; mkdir -p "$(dirname "$work")"
"$t" --hold "$bin" "$work" &
holder=$!
i=0
while [ ! -s "$work/pids" ] || [ "$(wc -l < "$work/pids")" -lt 3 ]; do
  i=$((i + 1)); [ $i -gt 100 ] && { echo "members did not start"; kill -9 $holder; exit 1; }
  sleep 0.1
done
pids=$(cat "$work/pids")
for p in $pids; do kill -0 "$p" 2>/dev/null || { echo "member $p not running"; exit 1; }; done
kill -9 $holder
wait $holder 2>/dev/null
i=0
for p in $pids; do
  while kill -0 "$p" 2>/dev/null; do
    # a zombie is dead: only its parent (the wrapper's) has not reaped it yet
    state=$(awk '{print $3}' /proc/$p/stat 2>/dev/null)
    [ "$state" = Z ] && break
    i=$((i + 1)); [ $i -gt 50 ] && { echo "member $p still alive after its harness died"; exit 1; }
    sleep 0.1
  done
done
echo "all $(echo $pids | wc -w) members died with their harness"
