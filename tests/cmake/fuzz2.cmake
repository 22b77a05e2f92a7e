# Regressions of fuzzing findings and of the work-counting tests, owned by engineer
# "fuzz2" (the corpora themselves run through tests/cmake/fuzz.cmake).

# A history whose operations claim revision 0 (no member gives one: revisions start
# at 1) was judged by the revision engine with those operations set aside, so a read
# of a value nobody wrote passed; the search engine judged them. Now bad input.
add_test(NAME fuzz.regress.rev0_history
  COMMAND sh -c "out=$(\"$0\" check \"$1\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 2 && echo \"$out\" | grep -q 'rev0-read-passes.jsonl:1: operation 1 has revision 0 (revisions start at 1)'"
          ${FL_BIN} ${CMAKE_SOURCE_DIR}/fuzz/regress/rev0-read-passes.jsonl)
set_tests_properties(fuzz.regress.rev0_history PROPERTIES LABELS fuzz TIMEOUT 60)
