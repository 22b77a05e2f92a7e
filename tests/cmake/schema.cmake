# schema.cmake (owner: schema, issue 15 §1): histories written by earlier faultlines.
# tests/data/history/schema-v1.db is a database of schema version 1 (see its README);
# it must load and check to the very same output as when it was made, and a new run
# appended to a copy of it (adding any missing columns) gets the digest it always had.
set(FL_SCHEMA_DATA ${CMAKE_SOURCE_DIR}/tests/data/history)
foreach(run 1 2)
  add_test(NAME history.schema.v1_checks.run${run}
    COMMAND sh -c "\"$0\" check \"$1/schema-v1.db\" --run $2 --json | python3 \"$1/strip_json.py\" | diff \"$1/schema-v1.run$2.json\" -"
            ${FL_BIN} ${FL_SCHEMA_DATA} ${run})
endforeach()
set(FL_SCHEMA_TMP ${CMAKE_BINARY_DIR}/tests/schema)
file(MAKE_DIRECTORY ${FL_SCHEMA_TMP})
add_test(NAME history.schema.v1_append
  COMMAND sh -c "set -e; d=\"$2/append.db\"; rm -f \"$d\" \"$d-wal\" \"$d-shm\"; cp \"$1/schema-v1.db\" \"$d\"; out=$(\"$0\" run \"$3/scenarios/smoke.lua\" --seed 1 --db \"$d\" --json); echo \"$out\" | grep -q '\"digest\":\"7580e14282fa2a20\"'; \"$0\" check \"$d\" --run 1 --json | python3 \"$1/strip_json.py\" | diff \"$1/schema-v1.run1.json\" -; python3 \"$1/strip_json.py\" --any-run < \"$1/schema-v1.run1.json\" > \"$2/want.json\"; \"$0\" check \"$d\" --run 3 --json | python3 \"$1/strip_json.py\" --any-run | diff \"$2/want.json\" -"
          ${FL_BIN} ${FL_SCHEMA_DATA} ${FL_SCHEMA_TMP} ${CMAKE_SOURCE_DIR})
set_tests_properties(history.schema.v1_checks.run1 history.schema.v1_checks.run2
  history.schema.v1_append PROPERTIES LABELS history TIMEOUT 120)

# Every run of the suite compares the history it kept in memory with a fresh load of
# its database, whatever its size (FAULTLINE_VERIFY_HISTORY, harness/run/run_mirror.c):
# set on every test of this directory once all of them are defined.
function(fl_schema_verify_all)
  get_property(all DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY TESTS)
  if(all)
    set_property(TEST ${all} APPEND PROPERTY ENVIRONMENT FAULTLINE_VERIFY_HISTORY=1)
  endif()
endfunction()
cmake_language(DEFER CALL fl_schema_verify_all)
