# chksearch.cmake (issue 13): the search engine decides what it gave up on.
#   search_chaos2893        chaos seed 2893 (1060 ops, 78 unknown; revisions 369..383
#                           written by unknown ops only) with the search alone: unknown
#                           before (5.05M steps, the cache's memory bound); a pass now
#                           (105k steps): anonymous unknown puts are twins, a state past
#                           the revision an op still to come answers at, or that breaks
#                           a mod/create revision a later read shows, has no completion,
#                           and historical reads are judged as the state lands on their
#                           revision. (Exit 4: the search gives the watch check no
#                           change log.)
#   search_anon_puts        ten unknown puts of k1 whose values nobody sees, five deletes
#                           that count k1: 6176 steps before, 52 now (twins).
#   search_anon_ok          three such puts, three deletes: a pass;
#   search_anon_violation   ... and a fourth delete that counts k1 with no put left: must
#                           stay a violation.
#   search_strict_guide     a historical read of revision 4 that only a jump over
#                           revision 4 (a write outside the history) leaves unjudged: the
#                           strict guide search fails it, and its failure is no verdict;
#                           the search then passes it by the jump rule, as before (the
#                           revision engine fails it: if the jump rule ever judges
#                           revisions jumped over, this becomes exit 1).
set(cs_data ${CMAKE_SOURCE_DIR}/tests/unit/checkers/data)
set(cs_expect sh ${CMAKE_SOURCE_DIR}/tests/unit/checkers/cli_expect.sh)

add_test(NAME cli.check.search_chaos2893
         COMMAND ${cs_expect} 4 "linearizability: pass \\(search engine" ${FL_BIN} check
                 --engine search ${cs_data}/search_chaos2893.jsonl)
add_test(NAME cli.check.search_anon_puts
         COMMAND ${cs_expect} 0 "\"engine\":\"search\",\"ops\":17,\"steps\":[0-9]{1,2}[,}]"
                 ${FL_BIN} check --engine search --json ${cs_data}/search_anon_puts.jsonl)
add_test(NAME cli.check.search_anon_ok
         COMMAND ${cs_expect} 0 "linearizability: pass \\(search engine" ${FL_BIN} check
                 --engine search ${cs_data}/search_anon_ok.jsonl)
add_test(NAME cli.check.search_anon_violation
         COMMAND ${cs_expect} 1 "linearizability: fail \\(search engine" ${FL_BIN} check
                 --engine search ${cs_data}/search_anon_violation.jsonl)
add_test(NAME cli.check.search_strict_guide
         COMMAND ${cs_expect} 0 "linearizability: pass \\(search engine" ${FL_BIN} check
                 --engine search ${cs_data}/search_strict_guide.jsonl)
set_tests_properties(cli.check.search_chaos2893 cli.check.search_anon_puts
                     cli.check.search_anon_ok cli.check.search_anon_violation
                     cli.check.search_strict_guide PROPERTIES LABELS cli TIMEOUT 120)
