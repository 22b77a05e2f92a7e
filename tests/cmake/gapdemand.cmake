# gapdemand.cmake (issue 13, chaos seed 102): the revision engine's gap filling takes a
# later observation that saw a key present without its value (a delete that counted
# it) as a demand for an unknown put that creates the key.
#   gap_demand_present  revision 3 is a gap; eight unknown puts of unread keys were
#                       called before the one unknown put of k, and the delete at
#                       revision 4 counted k. Before the fix every gap choice (the
#                       eight earliest called, all "fits") left k absent: the delete
#                       failed in every placement tried, "unknown" (exit 4) with
#                       --engine revision, where the put of k at 3 is a linearization.
set(gd_data ${CMAKE_SOURCE_DIR}/tests/unit/checkers/data)
set(gd_expect sh ${CMAKE_SOURCE_DIR}/tests/unit/checkers/cli_expect.sh)

add_test(NAME cli.check.gap_demand_present
         COMMAND ${gd_expect} 0 "linearizability: pass \\(revision engine" ${FL_BIN} check
                 --engine revision ${gd_data}/gap_demand_present.jsonl)
set_tests_properties(cli.check.gap_demand_present PROPERTIES LABELS cli TIMEOUT 60)
