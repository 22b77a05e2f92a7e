# framework.cmake: the unit-test framework's selection by name (tests/unit/fl_test.h):
# a name that matches no case fails the program, saying so; a chosen case runs alone.
add_test(NAME unit.framework.no_such_case
  COMMAND sh -c "out=$(FL_TEST_CASE=no_such_case \"$0\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 1 && echo \"$out\" | grep -q 'matches no case'"
  $<TARGET_FILE:unit_common_test_text>)
add_test(NAME unit.framework.one_case
  COMMAND sh -c "out=$(FL_TEST_CASE=test_prevote_rejoin \"$0\" 2>&1) && echo \"$out\" && echo \"$out\" | grep -Eq '^[1-9][0-9]* passed, 0 failed'"
  $<TARGET_FILE:unit_raft_test_election>)
set_tests_properties(unit.framework.no_such_case unit.framework.one_case PROPERTIES LABELS unit TIMEOUT 60)
