#!/bin/sh
# run-default.sh BUILD_DIR: what `make run` calls. Runs the default scenarios
# (scenarios/smoke.lua with seeds 1..3, plus one scenario of each area of
# scenarios/seeds/ with seed 1: Raft, MVCC/watch, clients) into BUILD_DIR/default-run/faultline.db; writes a report there when
# `faultline report` works, else prints the summaries. Exits non-zero when any run
# does not pass.
set -u
build=${1:-build}
bin="$build/faultline"
out="$build/default-run"
[ -x "$bin" ] || { echo "run-default: $bin not found (build first)" >&2; exit 2; }
mkdir -p "$out"
db="$out/faultline.db"
rm -f "$db" "$db-wal" "$db-shm"
status=0
run_one() {
  scn=$1; seed=$2
  "$bin" run "$scn" --seed "$seed" --db "$db" || { echo "FAILED: $scn --seed $seed" >&2; status=1; }
}
for seed in 1 2 3; do run_one scenarios/smoke.lua "$seed"; done
for name in leader-down watch-leader-change balancer-partition-8673; do
  scn=scenarios/seeds/$name.lua
  [ -f "$scn" ] && run_one "$scn" 1
done
if "$bin" report "$db" -o "$out/report" >/dev/null 2>&1; then
  echo "report: $out/report/index.html"
else
  echo "(faultline report not available; summaries above; history in $db)"
fi
exit $status
