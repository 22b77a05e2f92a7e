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
#   search_strict_guide     a historical read of revision 4, which a put answered at 5
#                           jumps over (a write outside the history): the state there is
#                           the one before the jump (no watch event shows revision 4), so
#                           the read of "a" mod 2 after the unknown put of "b" at 3 is a
#                           violation under both engines (the search passed it, leaving
#                           revisions jumped over unjudged, while the revision engine
#                           failed it).
#   search_jump_read_fail   the same, the jump made by a read answered at 5.
#   search_jump_ok          historical reads of revisions 3 (the unknown put) and 4
#                           (jumped over) that see what the state there holds: a pass
#                           under both engines.
#   search_compact_at       a read of revision 2 after a compaction to 2: etcd compacts
#                           only below the compact revision (mvcc: rev < compactMainRev),
#                           so both engines pass it (the search failed it, and chaos seeds
#                           such as 165, a read of revision 1 after the system's compact(1)).
#   search_jump_watch_ok    revision 3 written outside the history, shown by a watch
#                           event; historical reads of 3 and 4 (jumped over) see it: a
#                           pass under both engines.
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
# cs_both(NAME RC_SEARCH RC_REVISION VERDICT): history NAME under each engine, its exit
# code and "linearizability: VERDICT" (a search with watch events exits 4 on a pass: it
# gives the watch check no change log)
function(cs_both name rc_search rc_revision verdict)
    foreach(engine search revision)
        add_test(NAME cli.check.${name}_${engine}
                 COMMAND ${cs_expect} ${rc_${engine}} "linearizability: ${verdict} \\(${engine} engine"
                         ${FL_BIN} check --engine ${engine} ${cs_data}/${name}.jsonl)
        set_tests_properties(cli.check.${name}_${engine} PROPERTIES LABELS cli TIMEOUT 120)
    endforeach()
endfunction()
cs_both(search_strict_guide 1 1 fail)
cs_both(search_jump_read_fail 1 1 fail)
cs_both(search_jump_ok 0 0 pass)
cs_both(search_jump_watch_ok 4 0 pass)
cs_both(search_compact_at 0 0 pass)
set_tests_properties(cli.check.search_chaos2893 cli.check.search_anon_puts
                     cli.check.search_anon_ok cli.check.search_anon_violation
                     PROPERTIES LABELS cli TIMEOUT 120)
