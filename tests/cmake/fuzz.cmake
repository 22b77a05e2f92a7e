# Fuzz corpora, owned by engineer "fuzz": every seed and regression file of each
# target runs through it once (no fuzzing; fuzz/driver.c), in every build, so a crash
# the fuzzer found and we fixed stays fixed.
foreach(t jsonl jepsen porcupine frame histdb lua)
  fl_test(fuzz.${t} fuzz 600 fuzz_${t}_replay ${CMAKE_SOURCE_DIR}/fuzz/corpus/${t})
endforeach()

# Regressions of findings that are easier to state as a scenario (fuzz/regress/).
add_test(NAME fuzz.regress.nemesis_every_ns
  COMMAND sh -c "out=$(\"$0\" run \"$1\" --seed 1 --db \"$2\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 2 && echo \"$out\" | grep -q 'nemesis-every-ns.lua:6: .*nemesis.every must be at least 1 ms'"
          ${FL_BIN} ${CMAKE_SOURCE_DIR}/fuzz/regress/nemesis-every-ns.lua
          ${CMAKE_CURRENT_BINARY_DIR}/fuzz-regress.db)
set_tests_properties(fuzz.regress.nemesis_every_ns PROPERTIES LABELS fuzz TIMEOUT 60)
