#!/bin/sh
# shard_merge.sh FAULTLINE SRC WORKDIR: a sweep spread over three jobs by each job
# runner's environment (--shard auto), the three shard databases merged into one
# (faultline merge), and the merged database checked: every seed of the range exactly
# once, a report of all of them; then the refusals (no runner, malformed variables, an
# output that is also an input, a missing or foreign input) with exit 2 and OUT untouched.
set -u
BIN=$1; SRC=$2; W=$3
rm -rf "$W"; mkdir -p "$W"
SCN="$SRC/scenarios/smoke.lua"
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 "$1" "$2"; }

# job runner: index variable, count variable, indexes of the three jobs
for runner in "JOB_COMPLETION_INDEX FAULTLINE_SHARD_COUNT 0 1 2" \
              "CI_NODE_INDEX CI_NODE_TOTAL 1 2 3" \
              "CIRCLE_NODE_INDEX CIRCLE_NODE_TOTAL 0 1 2" \
              "BUILDKITE_PARALLEL_JOB BUILDKITE_PARALLEL_JOB_COUNT 0 1 2" \
              "SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT 0 1 2"; do
  set -- $runner
  iv=$1; cv=$2; shift 2
  dbs=""
  for idx in "$@"; do
    db="$W/$iv-$idx.db"
    env "$iv=$idx" "$cv=3" "$BIN" sweep "$SCN" --seeds 1..7 --shard auto -j 2 --db "$db" \
      >/dev/null 2>"$W/err" || { cat "$W/err"; fail "$iv=$idx: sweep failed"; }
    grep -q "shard auto: shard .*/3 from .*$iv=$idx" "$W/err" || { cat "$W/err"; fail "$iv: no shard line"; }
    dbs="$dbs $db"
  done
  out="$W/$iv-all.db"
  "$BIN" merge "$out" $dbs 2>"$W/err" || { cat "$W/err"; fail "$iv: merge failed"; }
  grep -q "merge: 7 runs from 3 databases" "$W/err" || { cat "$W/err"; fail "$iv: merge count"; }
  seeds=$(q "$out" "select group_concat(seed, ',') from (select seed from runs order by seed)")
  [ "$seeds" = "1,2,3,4,5,6,7" ] || fail "$iv: merged seeds are $seeds"
  [ "$(q "$out" "select count(distinct run_id) from ops")" = 7 ] || fail "$iv: ops of 7 runs"
done
"$BIN" report "$W/CI_NODE_INDEX-all.db" -o "$W/report" >/dev/null 2>&1 || fail "report of the merged database"
grep -q "smoke" "$W/report/index.html" || fail "report names the runs"
# merging into a database that holds runs already adds to them
"$BIN" merge "$W/CI_NODE_INDEX-all.db" "$W/CIRCLE_NODE_INDEX-0.db" 2>/dev/null || fail "merge into a full database"
[ "$(q "$W/CI_NODE_INDEX-all.db" "select count(*) from runs")" = 10 ] || fail "10 runs after a second merge"

expect2() { # REGEX CMD...: exit 2 and the message
  re=$1; shift
  "$@" >/dev/null 2>"$W/err"; rc=$?
  [ $rc = 2 ] || { cat "$W/err"; fail "exit $rc, want 2: $*"; }
  grep -Eq -- "$re" "$W/err" || { cat "$W/err"; fail "no /$re/: $*"; }
}
clean_env="env -u JOB_COMPLETION_INDEX -u CI_NODE_INDEX -u CIRCLE_NODE_INDEX -u BUILDKITE_PARALLEL_JOB -u SLURM_ARRAY_TASK_ID"
expect2 "no job runner's shard variables are set" $clean_env "$BIN" sweep "$SCN" --shard auto --db "$W/x.db"
expect2 "FAULTLINE_SHARD_COUNT is not set" $clean_env JOB_COMPLETION_INDEX=1 "$BIN" sweep "$SCN" --shard auto --db "$W/x.db"
expect2 "CI_NODE_INDEX=0 is outside" $clean_env CI_NODE_INDEX=0 CI_NODE_TOTAL=2 "$BIN" sweep "$SCN" --shard auto --db "$W/x.db"
[ -e "$W/x.db" ] && fail "a refused sweep made a database"
before=$(q "$W/CI_NODE_INDEX-all.db" "select count(*) from runs")
expect2 "is the output database too" "$BIN" merge "$W/CI_NODE_INDEX-all.db" "$W/CI_NODE_INDEX-1.db" "$W/CI_NODE_INDEX-all.db"
expect2 "given twice" "$BIN" merge "$W/m.db" "$W/CI_NODE_INDEX-1.db" "$W/CI_NODE_INDEX-1.db"
expect2 "nope.db" "$BIN" merge "$W/CI_NODE_INDEX-all.db" "$W/CI_NODE_INDEX-1.db" "$W/nope.db"
printf 'not a database at all, not at all, no' > "$W/foreign.db"
expect2 "foreign.db" "$BIN" merge "$W/CI_NODE_INDEX-all.db" "$W/CI_NODE_INDEX-1.db" "$W/foreign.db"
expect2 "needs an output database" "$BIN" merge "$W/m.db"
[ "$(q "$W/CI_NODE_INDEX-all.db" "select count(*) from runs")" = "$before" ] || fail "a refused merge changed OUT"
echo ok
