# checkers.cmake: `faultline check` tests: the whole porcupine corpus against
# expected_verdicts.tsv (skipped, saying so, when the corpus is absent), the error
# paths (exit 2 with FILE:LINE), the --json shape and exit codes of verdicts.
set(chk_dir ${CMAKE_SOURCE_DIR}/tests/unit/checkers)
set(chk_data ${chk_dir}/data)
set(chk_expect sh ${chk_dir}/cli_expect.sh)

add_test(NAME corpus.checkers.porcupine
         COMMAND sh ${chk_dir}/corpus_check.sh ${FL_BIN} ${FL_SHARED}/corpus/porcupine)
set_tests_properties(corpus.checkers.porcupine PROPERTIES LABELS corpus TIMEOUT 120
                     SKIP_RETURN_CODE 77)
# The same corpus through the loaders and the engines directly (unit test binary).
if(TEST unit.history.test_load_corpus)
  set_tests_properties(unit.history.test_load_corpus PROPERTIES SKIP_RETURN_CODE 77
                       LABELS "unit;corpus")
endif()

function(chk_cli name exit regex)
  add_test(NAME cli.check.${name} COMMAND ${chk_expect} ${exit} ${regex} ${FL_BIN} check ${ARGN})
  set_tests_properties(cli.check.${name} PROPERTIES LABELS cli TIMEOUT 60)
endfunction()

chk_cli(pass 0 "verdict: pass" ${chk_data}/ok.jsonl)
# an empty history is bad input, never a pass (issue 12 item 13)
chk_cli(empty 2 "empty.jsonl: no operations" ${chk_data}/empty.jsonl)
chk_cli(stale_read 1 "linearizability: fail.*|stale read" ${chk_data}/stale.jsonl)
chk_cli(dropped_event 1 "broke reliable: watch 7, revision 3" ${chk_data}/watch_drop.jsonl)
# a put applied twice, the second application seen only by a watch (retried write)
chk_cli(duplicate_application 1 "applied at revision 2 .its response. and 3 .a watch event." ${chk_data}/dup_watch.jsonl)
chk_cli(bad_json 2 "bad_json.jsonl:2: malformed JSON" ${chk_data}/bad_json.jsonl)
chk_cli(unknown_op 2 "bad_op.jsonl:2: unknown op" ${chk_data}/bad_op.jsonl)
chk_cli(return_before_call 2 "bad_time.jsonl:1: return .* before call" ${chk_data}/bad_time.jsonl)
chk_cli(jepsen_unpaired 2 "bad_jepsen.log:3: completion of process 1 without an invoke"
        ${chk_data}/bad_jepsen.log)
chk_cli(kv_unknown_op 2 "bad_kv.txt:2: unknown op" ${chk_data}/bad_kv.txt)
chk_cli(not_a_file 2 "not a regular file" ${chk_data})
chk_cli(missing_file 2 "no such file" ${chk_data}/does-not-exist.jsonl)
chk_cli(bad_format 2 "--format" ${chk_data}/ok.jsonl --format xml)
chk_cli(wrong_format 2 "ok.jsonl:1: malformed line" ${chk_data}/ok.jsonl --format jepsen)
# --json: exactly one object with the check names and the guarantees nested.
set(json_shape "^\\{\"verdict\":\"fail\".*\"checks\":\\{\"linearizability\":\\{\"verdict\":\"pass\".*\"watch\":\\{\"verdict\":\"fail\".*\"guarantees\":\\{\"ordered\":\\{\"verdict\":\"pass\".*\"reliable\":\\{\"verdict\":\"fail\"")
chk_cli(json_shape 1 "${json_shape}" ${chk_data}/watch_drop.jsonl --json)
chk_cli(json_pass 0 "^\\{\"verdict\":\"pass\".*\"checks\":\\{\"linearizability\":\\{\"verdict\":\"pass\"" ${chk_data}/ok.jsonl --json)
# A time bound gives "unknown" (exit 4), never a guess; the NODELETE filter is judged.
chk_cli(timeout_unknown 4 "linearizability: unknown" ${chk_data}/hard.jsonl --timeout 0.000001)
chk_cli(watch_filter 1 "broke filter: watch 2, revision 3" ${chk_data}/filter.jsonl)
# A faultline database with two runs: --run is required, and run 1 is judged from it.
add_test(NAME cli.check.db_runs
         COMMAND sh ${chk_dir}/db_check.sh ${FL_BIN} ${CMAKE_SOURCE_DIR}/scenarios/smoke.lua
                 ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(cli.check.db_runs PROPERTIES LABELS cli TIMEOUT 120)
# Writes no client asked for: a lease expiry only a watch saw (an unknown put is not
# placed at its revision) and a client revoke whose keys come from the leased puts.
chk_cli(lease_expiry 0 "verdict: pass" ${chk_data}/lease_expiry.jsonl)
# (the search establishes no change log, so the watch verdict is unknown: exit 4)
chk_cli(lease_expiry_search 4 "linearizability: pass \\(search engine"
        ${chk_data}/lease_expiry.jsonl --engine search)
chk_cli(bad_lease 2 "bad_lease.jsonl:2: lease_revoke: \"keys\" is not an array"
        ${chk_data}/bad_lease.jsonl)
