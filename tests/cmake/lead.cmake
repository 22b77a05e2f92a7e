# `faultline check` on a database of several runs: without --run it is exit 2 naming
# the runs, and its --help says so (it once claimed "default: the latest").
set(FL_LEAD_DB ${CMAKE_BINARY_DIR}/test-dbs/lead)
add_test(NAME cli.check.several_runs_need_run
  COMMAND sh -c "set -e; d=\"$1\"; rm -rf \"$d\"; mkdir -p \"$d\"
    \"$0\" run \"$2\" --seed 1 --db \"$d/two.db\" >/dev/null 2>&1 || true
    \"$0\" run \"$2\" --seed 2 --db \"$d/two.db\" >/dev/null 2>&1 || true
    rc=0; out=$(\"$0\" check \"$d/two.db\" 2>&1) || rc=$?
    test $rc -eq 2; echo \"$out\" | grep -q 'choose one with --run'
    \"$0\" check \"$d/two.db\" --run 2 >/dev/null 2>&1
    \"$0\" check --help 2>&1 | grep -q 'needed when it holds several runs'
    ! \"$0\" check --help 2>&1 | grep -q 'the latest'"
  ${FL_BIN} ${FL_LEAD_DB} ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua)
set_tests_properties(cli.check.several_runs_need_run PROPERTIES LABELS cli TIMEOUT 120)

# A live run refuses a --workdir that is not empty: its members would start on an
# earlier run's data and mix two runs in one history (a false linearizability failure
# was seen that way). Exit 2, naming the directory; nothing is started there.
add_test(NAME cli.run.workdir_not_empty
  COMMAND sh -c "set -e; d=\"$1\"; rm -rf \"$d\"; mkdir -p \"$d/members\"
    touch \"$d/members/left-over\"
    rc=0; out=$(\"$0\" run \"$2\" --target live --workdir \"$d/members\" --db \"$d/h.db\" 2>&1) || rc=$?
    test $rc -eq 2; echo \"$out\" | grep -q \"$d/members: the work directory is not empty\"
    test \"$(ls \"$d/members\")\" = left-over; rm -rf \"$d\""
  ${FL_BIN} ${FL_LEAD_DB}/workdir ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua)
set_tests_properties(cli.run.workdir_not_empty PROPERTIES LABELS cli TIMEOUT 120)

# A run whose script stopped early (here a script error after 2 s of traffic) never
# reports a check `pass`: the rest of its history was never recorded. Every check that
# found nothing wrong is `unknown` with that reason, in the summary and the checks table.
add_test(NAME cli.run.early_checks_unknown
  COMMAND sh -c "d=\"$1\"; rm -rf \"$d\"; mkdir -p \"$d\"
    rc=0; \"$0\" run \"$2\" --db \"$d/h.db\" --json > \"$d/s.json\" 2>/dev/null || rc=$?
    test $rc -eq 2 || exit 1
    python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))
assert j[\"verdict\"] == \"error\", j[\"verdict\"]
assert j[\"ops\"][\"ok\"] > 10, j[\"ops\"]
for k in (\"linearizability\", \"watch\", \"raft_safety\", \"converge\", \"expect\"):
    c = j[\"checks\"][k]
    assert c[\"verdict\"] == \"unknown\", (k, c[\"verdict\"])
    assert \"before\" in c[\"reason\"], (k, c.get(\"reason\"))' \"$d/s.json\" || exit 1
    n=$(sqlite3 \"$d/h.db\" \"select count(*) from checks where verdict = 'pass'\" 2>/dev/null || echo x)
    test \"$n\" = 0 || test \"$n\" = x || exit 1
    rm -rf \"$d\""
  ${FL_BIN} ${FL_LEAD_DB}/early ${CMAKE_SOURCE_DIR}/tests/scenario/early_error.lua)
set_tests_properties(cli.run.early_checks_unknown PROPERTIES LABELS cli TIMEOUT 120)
