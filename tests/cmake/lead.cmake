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
