# Tests owned by engineer "live" (issue 16): `faultline export`, the process
# supervisor and TCP proxy of harness/live, and the etcd transport.
set(FL_LIVE_WORK ${CMAKE_BINARY_DIR}/live-tests)

# export -> check gives the database's verdicts: a passing run, a linearizability
# bug and a watch bug.
foreach(entry "smoke=scenarios/smoke.lua=-" "stale-read=scenarios/bugs/stale-read.lua=mvcc.stale_read"
        "watch-skip=scenarios/bugs/watch-skip-on-compact.lua=mvcc.watch_skip_on_compact")
  string(REPLACE "=" ";" parts ${entry})
  list(GET parts 0 name)
  list(GET parts 1 scn)
  list(GET parts 2 bug)
  add_test(NAME cli.export.roundtrip.${name}
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cmake/live_export.py ${FL_BIN}
            ${CMAKE_SOURCE_DIR}/${scn} 1 ${bug} ${FL_LIVE_WORK}/export)
  set_tests_properties(cli.export.roundtrip.${name} PROPERTIES LABELS cli TIMEOUT 120)
endforeach()

# Bad arguments: exit 2 with a message naming what is wrong.
set(FL_EXPORT_BAD
  "format_missing=export x.db=--format jsonl is required"
  "format_other=export x.db --format csv=--format wants jsonl"
  "no_db=export --format jsonl=no database given"
  "db_missing=export /nonexistent/h.db --format jsonl=/nonexistent/h.db"
  "bad_run=export x.db --run 0 --format jsonl=--run"
  "unknown_opt=export x.db --format jsonl --bogus=unknown option '--bogus'"
  "out_dir_missing=export x.db --format jsonl -o /nonexistent/dir/o.jsonl=does not exist"
  "two_dbs=export a.db b.db --format jsonl=one database at a time")
fl_cli_bad(cli.export.bad ${FL_EXPORT_BAD})

# harness/live: the unit tests of the supervisor and proxy are unit tests (label unit
# and live); the etcd cluster test needs etcd and says it skipped without it (exit 77).
set_tests_properties(unit.live.test_proc unit.live.test_proxy PROPERTIES LABELS "unit;live")
set_tests_properties(unit.live.test_etcd PROPERTIES LABELS live SKIP_RETURN_CODE 77 TIMEOUT 120)
# The skip itself: with no etcd to find, the test exits 77 and says why.
add_test(NAME live.etcd_skip_without_etcd
  COMMAND sh -c "out=$(FL_ETCD=/nonexistent/etcd \"$0\"); rc=$?; echo \"$out\"; test $rc -eq 77 && echo \"$out\" | grep -q 'skipped: etcd not installed'"
          $<TARGET_FILE:unit_live_test_etcd>)
set_tests_properties(live.etcd_skip_without_etcd PROPERTIES LABELS live TIMEOUT 30)

# The hidden exec wrapper of the supervisor, in the faultline binary: it runs the
# program when its parent is the pid it was given, and refuses (127) otherwise.
add_test(NAME cli.pdeath_exec.runs
  COMMAND sh -c "out=$(sh -c '\"$0\" _pdeath-exec $$ echo wrapped; true' \"$0\"); test \"$out\" = wrapped" ${FL_BIN})
add_test(NAME cli.pdeath_exec.parent_gone
  COMMAND sh -c "\"$0\" _pdeath-exec 1 echo wrapped; test $? -eq 127" ${FL_BIN})
add_test(NAME cli.export.help
  COMMAND sh -c "\"$0\" export --help | grep -q 'faultline export DB'" ${FL_BIN})
set_tests_properties(cli.pdeath_exec.runs cli.pdeath_exec.parent_gone cli.export.help
  PROPERTIES LABELS cli TIMEOUT 30)
