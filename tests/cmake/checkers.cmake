# checkers.cmake: `faultline check` tests: the whole porcupine corpus against
# expected_verdicts.tsv (skipped, saying so, when the corpus is absent), the error
# paths (exit 2 with FILE:LINE), the --json shape and exit codes of verdicts.
set(chk_dir ${CMAKE_SOURCE_DIR}/tests/unit/checkers)
set(chk_data ${FL_CHK_DATA})

add_test(NAME corpus.checkers.porcupine
         COMMAND sh ${chk_dir}/corpus_check.sh ${FL_BIN} ${FL_SHARED}/corpus/porcupine)
set_tests_properties(corpus.checkers.porcupine PROPERTIES LABELS corpus TIMEOUT 120
                     SKIP_RETURN_CODE 77)
# The same corpus through the loaders and the engines directly (unit test binary).
if(TEST unit.history.test_load_corpus)
  set_tests_properties(unit.history.test_load_corpus PROPERTIES SKIP_RETURN_CODE 77
                       LABELS "unit;corpus")
endif()

fl_check_test(pass 0 "verdict: pass" ${chk_data}/ok.jsonl)
# an empty history is bad input, never a pass (issue 12 item 13)
fl_check_test(empty 2 "empty.jsonl: no operations" ${chk_data}/empty.jsonl)
fl_check_test(stale_read 1 "linearizability: fail.*|stale read" ${chk_data}/stale.jsonl)
fl_check_test(dropped_event 1 "broke reliable: watch 7, revision 3" ${chk_data}/watch_drop.jsonl)
# a put applied twice, the second application seen only by a watch (retried write)
fl_check_test(duplicate_application 1 "applied at revision 2 .its response. and 3 .a watch event." ${chk_data}/dup_watch.jsonl)
fl_check_test(bad_json 2 "bad_json.jsonl:2: malformed JSON" ${chk_data}/bad_json.jsonl)
fl_check_test(unknown_op 2 "bad_op.jsonl:2: unknown op" ${chk_data}/bad_op.jsonl)
fl_check_test(return_before_call 2 "bad_time.jsonl:1: return .* before call" ${chk_data}/bad_time.jsonl)
fl_check_test(jepsen_unpaired 2 "bad_jepsen.log:3: completion of process 1 without an invoke"
              ${chk_data}/bad_jepsen.log)
fl_check_test(kv_unknown_op 2 "bad_kv.txt:2: unknown op" ${chk_data}/bad_kv.txt)
fl_check_test(not_a_file 2 "not a regular file" ${chk_data})
fl_check_test(missing_file 2 "no such file" ${chk_data}/does-not-exist.jsonl)
fl_check_test(bad_format 2 "--format" ${chk_data}/ok.jsonl --format xml)
fl_check_test(wrong_format 2 "ok.jsonl:1: malformed line" ${chk_data}/ok.jsonl --format jepsen)
# --json: exactly one object with the check names and the guarantees nested.
set(json_shape "^\\{\"verdict\":\"fail\".*\"checks\":\\{\"linearizability\":\\{\"verdict\":\"pass\".*\"watch\":\\{\"verdict\":\"fail\".*\"guarantees\":\\{\"ordered\":\\{\"verdict\":\"pass\".*\"reliable\":\\{\"verdict\":\"fail\"")
fl_check_test(json_shape 1 "${json_shape}" ${chk_data}/watch_drop.jsonl --json)
fl_check_test(json_pass 0 "^\\{\"verdict\":\"pass\".*\"checks\":\\{\"linearizability\":\\{\"verdict\":\"pass\"" ${chk_data}/ok.jsonl --json)
# A time bound gives "unknown" (exit 4), never a guess; the NODELETE filter is judged.
fl_check_test(timeout_unknown 4 "linearizability: unknown" ${chk_data}/hard.jsonl --timeout 0.000001)
fl_check_test(watch_filter 1 "broke filter: watch 2, revision 3" ${chk_data}/filter.jsonl)
# A faultline database with two runs: --run is required, and run 1 is judged from it.
fl_test(cli.check.db_runs cli 120
  sh ${chk_dir}/db_check.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua
  ${CMAKE_CURRENT_BINARY_DIR})
# Writes no client asked for: a lease expiry only a watch saw (an unknown put is not
# placed at its revision) and a client revoke whose keys come from the leased puts.
fl_check_test(lease_expiry 0 "verdict: pass" ${chk_data}/lease_expiry.jsonl)
# (the search establishes no change log, so the watch verdict is unknown: exit 4)
fl_check_test(lease_expiry_search 4 "linearizability: pass \\(search engine"
              ${chk_data}/lease_expiry.jsonl --engine search)
fl_check_test(bad_lease 2 "bad_lease.jsonl:2: lease_revoke: \"keys\" is not an array"
              ${chk_data}/bad_lease.jsonl)
