# `faultline bench --curves` (issue 17 §2): the machinery at tiny sizes
# (FL_BENCH_CURVES_QUICK=1), never a figure; and its bad arguments.
add_test(NAME cli.bench.curves_quick
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cmake/curves_check.py ${FL_BIN})
set_tests_properties(cli.bench.curves_quick PROPERTIES LABELS cli TIMEOUT 300
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME cli.bench.curves_no_only
  COMMAND sh -c "out=$(\"$0\" bench --curves --only sim 2>&1); rc=$?; test $rc -eq 2 && echo \"$out\" | grep -q 'takes no --only'" ${FL_BIN})
set_tests_properties(cli.bench.curves_no_only PROPERTIES LABELS cli TIMEOUT 30)
