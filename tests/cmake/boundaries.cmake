# Module boundaries (issue 15 §5): an internal header (*_int.h) included from outside
# its module fails to build, naming itself; the same file builds once it declares
# itself a white-box user of that module. Both halves run, so the test cannot pass on
# a broken include path alone.
fl_test(build.internal_headers unit 60
  ${CMAKE_COMMAND} -DCC=${CMAKE_C_COMPILER} -DSRC=${CMAKE_SOURCE_DIR}
  -DFILE=${CMAKE_SOURCE_DIR}/tests/data/boundaries/outside.c
  -P ${CMAKE_SOURCE_DIR}/tests/data/boundaries/check.cmake)
