# `faultline bench --curves` (issue 17 §2): the machinery at tiny sizes
# (FL_BENCH_CURVES_QUICK=1), never a figure; and its bad arguments.
add_test(NAME cli.bench.curves_quick
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/cmake/curves_check.py ${FL_BIN})
set_tests_properties(cli.bench.curves_quick PROPERTIES LABELS cli TIMEOUT 300
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME cli.bench.curves_no_only
  COMMAND sh -c "out=$(\"$0\" bench --curves --only sim 2>&1); rc=$?; test $rc -eq 2 && echo \"$out\" | grep -q 'takes no --only'" ${FL_BIN})
set_tests_properties(cli.bench.curves_no_only PROPERTIES LABELS cli TIMEOUT 30)
# chk_op keeps the op id in 32 bits (a 10M-op history in less memory): an id beyond
# that is bad input naming its file and line, exit 2; the largest one that fits loads.
add_test(NAME cli.check.op_id_range
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cmake/op_id_range.sh ${FL_BIN}
          ${CMAKE_BINARY_DIR}/tests/op_id_range)
set_tests_properties(cli.check.op_id_range PROPERTIES LABELS cli TIMEOUT 30)
