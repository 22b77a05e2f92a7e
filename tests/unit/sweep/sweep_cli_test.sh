#!/bin/sh
# sweep_cli_test.sh MODE BIN SRC WORKDIR: CLI tests of `faultline sweep` and
# `faultline report` (owner: reports). MODE is one of
#   faulty  a sweep where one worker aborts, one hangs past --timeout and one dies
#           after writing its database: all recorded as 'error' with their seed and
#           reason, the others judged normally (one prints a stray line before its
#           summary), exit code 3, JUnit valid
#   shard   three shards of 1..10 cover every seed exactly once; the merged report
#           of the three databases lists 10 runs
#   failfast --fail-fast stops launching after the first error
#   sigint  SIGINT during a sweep of hanging workers: clean stop, partial results
#           in the database, exit code 3
#   errors  bad arguments and bad databases: one line, exit code 2
# Database checks use python3's sqlite3 module.
set -u
MODE=$1 BIN=$2 SRC=$3 W=$4
SCN=$SRC/scenarios/smoke.lua
WORKER=$SRC/tests/unit/sweep/faulty_worker.sh
rm -rf "$W" && mkdir -p "$W" || exit 1
fail() { echo "FAIL: $*"; [ -f "$W/err" ] && tail -30 "$W/err"; exit 1; }

q() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(str(x) for x in r) for r in c.execute(sys.argv[2])))" "$@"; }

case $MODE in
faulty)
  FL_REAL_BIN=$BIN FL_CRASH_SEEDS=3 FL_HANG_SEEDS=4 FL_LATE_CRASH_SEEDS=5 FL_NOISY_SEEDS=6 \
    "$BIN" sweep "$SCN" --seeds 1..6 -j 2 --timeout 4 --worker "$WORKER" \
    --db "$W/a.db" --junit "$W/a.xml" --report "$W/rep" 2>"$W/err"
  rc=$?
  [ $rc -eq 3 ] || fail "exit code $rc, expected 3"
  [ "$(q "$W/a.db" 'select group_concat(seed) from (select seed from runs order by seed)')" = "1,2,3,4,5,6" ] ||
    fail "runs: $(q "$W/a.db" 'select run_id, seed, verdict from runs')"
  [ "$(q "$W/a.db" "select group_concat(seed) from (select seed from runs where verdict='error' order by seed)")" = "3,4,5" ] ||
    fail "error runs: $(q "$W/a.db" 'select seed, verdict from runs')"
  # run_ids follow seed order whatever order the workers finished in
  [ "$(q "$W/a.db" 'select count(*) from runs where run_id = seed')" = 6 ] || fail "run_ids not in seed order"
  q "$W/a.db" "select detail from checks c join runs r using(run_id) where r.seed=3 and checker='worker'" | grep -q 'signal 6' || fail "seed 3 reason"
  q "$W/a.db" "select detail from checks c join runs r using(run_id) where r.seed=4 and checker='worker'" | grep -q 'timeout' || fail "seed 4 reason"
  q "$W/a.db" "select detail from checks c join runs r using(run_id) where r.seed=5 and checker='worker'" | grep -q 'signal 11' || fail "seed 5 reason"
  # the late crash kept the history its worker had written
  [ "$(q "$W/a.db" 'select count(*) from ops o join runs r using(run_id) where r.seed=5')" -gt 0 ] || fail "seed 5 lost its ops"
  grep -q "^error (3 runs):" "$W/err" || fail "no grouped error list"
  grep -q "faultline run $SCN --seed 4" "$W/err" || fail "no replay command for seed 4"
  python3 - "$W/a.xml" <<'EOF' || fail "junit"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
cases = r.findall("./testsuite/testcase")
errs = r.findall("./testsuite/testcase/error")
assert r.tag == "testsuites" and len(cases) == 6 and len(errs) == 3, (len(cases), len(errs))
assert sorted(c.get("name") for c in cases) == ["seed %d" % i for i in range(1, 7)]
assert all(c.get("classname").endswith("smoke.lua") for c in cases)
EOF
  python3 "$SRC/tests/unit/reports/check_report.py" "$W/rep" || fail "report"
  ls "$W" | grep -q sweep && fail "work folder left behind: $(ls -a "$W")"
  ;;
shard)
  for k in 1 2 3; do
    # shard 2 spells the worker count as make does (-j2)
    if [ $k -eq 2 ]; then jobs="-j2"; else jobs="-j 2"; fi
    "$BIN" sweep "$SCN" --seeds 1..10 --shard $k/3 $jobs --db "$W/s$k.db" 2>"$W/err"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "shard $k exit code $rc"
  done
  [ "$(q "$W/s1.db" 'select group_concat(seed) from (select seed from runs order by seed)')" = "1,4,7,10" ] || fail "shard 1/3"
  [ "$(q "$W/s2.db" 'select group_concat(seed) from (select seed from runs order by seed)')" = "2,5,8" ] || fail "shard 2/3"
  [ "$(q "$W/s3.db" 'select group_concat(seed) from (select seed from runs order by seed)')" = "3,6,9" ] || fail "shard 3/3"
  "$BIN" report "$W/s1.db" "$W/s2.db" "$W/s3.db" -o "$W/rep" 2>"$W/err" || fail "report exit $?"
  python3 - "$W/rep/summary.json" <<'EOF' || fail "merged summary"
import json, sys
s = json.load(open(sys.argv[1]))
seeds = sorted(r["seed"] for r in s["runs"])
assert seeds == list(range(1, 11)), seeds
assert s["totals"]["runs"] == 10
EOF
  [ "$(ls "$W/rep"/run-*.html | wc -l)" -eq 10 ] || fail "run pages"
  python3 "$SRC/tests/unit/reports/check_report.py" "$W/rep" || fail "report check"
  ;;
failfast)
  # the database already holds a run: the sweep appends, its JUnit lists only its own
  "$BIN" run "$SCN" --seed 42 --db "$W/f.db" --json >/dev/null 2>&1
  FL_REAL_BIN=$BIN FL_CRASH_SEEDS=2 \
    "$BIN" sweep "$SCN" --seeds 1..6 -j 1 --fail-fast --worker "$WORKER" --db "$W/f.db" \
    --junit "$W/f.xml" 2>"$W/err"
  rc=$?
  [ $rc -eq 3 ] || fail "exit code $rc, expected 3"
  [ "$(q "$W/f.db" 'select group_concat(seed) from (select seed from runs order by run_id)')" = "42,1,2" ] ||
    fail "fail-fast ran: $(q "$W/f.db" 'select seed, verdict from runs')"
  grep -q "2 of 6 planned runs" "$W/err" || fail "summary line"
  [ "$(grep -c '<testcase' "$W/f.xml")" -eq 2 ] || fail "junit lists runs the sweep did not make"
  ;;
sigint)
  FL_REAL_BIN=$BIN FL_HANG_SEEDS="1 2 3 4 5 6 7 8" \
    "$BIN" sweep "$SCN" --seeds 1..8 -j 2 --timeout 100 --worker "$WORKER" --db "$W/i.db" \
    --junit "$W/i.xml" 2>"$W/err" &
  pid=$!
  sleep 2
  kill -INT $pid
  wait $pid
  rc=$?
  [ $rc -eq 3 ] || fail "exit code $rc after SIGINT, expected 3"
  grep -q interrupted "$W/err" || fail "no interruption message"
  [ "$(q "$W/i.db" 'select count(*) from runs')" = 2 ] || fail "partial runs: $(q "$W/i.db" 'select seed, verdict from runs')"
  [ "$(q "$W/i.db" "select count(*) from runs where verdict='error'")" = 2 ] || fail "interrupted runs not error"
  [ -s "$W/i.xml" ] || fail "no junit after SIGINT"
  ;;
errors)
  expect2() { "$@" >/dev/null 2>"$W/err"; rc=$?; [ $rc -eq 2 ] || fail "exit $rc for: $*"; [ "$(wc -l <"$W/err")" -ge 1 ] || fail "no message for: $*"; }
  expect2 "$BIN" sweep "$SCN" --seeds 5..1
  expect2 "$BIN" sweep "$SCN" --seeds x
  expect2 "$BIN" sweep "$SCN" --shard 4/3
  expect2 "$BIN" sweep "$SCN" --shard 0/3
  expect2 "$BIN" sweep "$SCN" -j 0
  expect2 "$BIN" sweep "$W/missing.lua"
  expect2 "$BIN" sweep "$SCN" --bug no_such_bug
  expect2 "$BIN" sweep "$SCN" --worker "$W/no-such-worker"
  expect2 "$BIN" sweep "$SCN" --db /nonexistent/dir/x.db --seeds 1..1
  expect2 "$BIN" report "$W/missing.db" -o "$W/r1"
  grep -q "missing.db" "$W/err" || fail "message does not name the database"
  echo "not a database at all, just some text in a file" >"$W/text.db"
  expect2 "$BIN" report "$W/text.db" -o "$W/r2"
  "$BIN" run "$SCN" --seed 1 --db "$W/ok.db" --json >/dev/null 2>&1
  expect2 "$BIN" report "$W/ok.db" --run 99 -o "$W/r3"
  grep -q "no run 99" "$W/err" || fail "unknown run message: $(cat "$W/err")"
  expect2 "$BIN" report "$W/ok.db" -o /dev/null/sub
  expect2 "$BIN" report "$W/ok.db"
  "$BIN" report "$W/ok.db" --run 1 -o "$W/r4" 2>"$W/err" || fail "report of a good run"
  [ -s "$W/r4/index.html" ] && [ -s "$W/r4/junit.xml" ] && [ -s "$W/r4/summary.json" ] && [ -s "$W/r4/summary.md" ] || fail "report files"
  python3 "$SRC/tests/unit/reports/check_report.py" "$W/r4" || fail "report of a real run"
  # summary.json rebuilt from the database agrees with the run's own --json
  "$BIN" run "$SCN" --seed 2 --db "$W/two.db" --json >"$W/two.json" 2>/dev/null
  "$BIN" report "$W/two.db" -o "$W/r5" 2>"$W/err" || fail "report of seed 2"
  python3 - "$W/two.json" "$W/r5/summary.json" <<'PY' || fail "summary.json differs from --json"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("scenario", "seed", "digest", "verdict", "sim_ms", "ops", "leaders"):
    assert a[k] == b[k], (k, a[k], b[k])
f = lambda s: [(x["at_ms"], x["kind"], x["target"], x.get("detail")) for x in s["faults"]]
assert f(a) == f(b), (f(a), f(b))
for name, c in a["checks"].items():
    assert b["checks"][name]["verdict"] == c["verdict"], name
assert [c["id"] for c in a["clients"]] == [c["id"] for c in b["clients"]]
for x, y in zip(a["clients"], b["clients"]):
    assert (x["ok"], x["fail"], x["unknown"]) == (y["ok"], y["fail"], y["unknown"]), (x, y)
PY
  ;;
*) fail "unknown mode $MODE" ;;
esac
echo "sweep_cli_test $MODE: ok"
