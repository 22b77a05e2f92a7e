# gapdemand.cmake (issue 13, chaos seed 102): the revision engine's gap filling takes a
# later observation that saw a key present without its value (a delete that counted
# it) as a demand for an unknown put that creates the key.
#   gap_demand_present  revision 3 is a gap; eight unknown puts of unread keys were
#                       called before the one unknown put of k, and the delete at
#                       revision 4 counted k. Before the fix every gap choice (the
#                       eight earliest called, all "fits") left k absent: the delete
#                       failed in every placement tried, "unknown" (exit 4) with
#                       --engine revision, where the put of k at 3 is a linearization.
set(gd_rev_pass "linearizability: pass \\(revision engine")
set(gd_search_pass "linearizability: pass \\(search engine")

fl_check_history(gap_demand_present 0 ${gd_rev_pass} --engine revision)

# Three more gap-filling decisions, found on the 1M-op bench's generator (seed 11 and 2
# at 20k/100k ops, 2% unknown): each history is linearizable (the search passes it) and
# was "unknown" with --engine revision before its fix, passing after it; each test fails
# with its own fix reverted alone.
#   gap_create_choice   a read shows k created at revision 3, and two unknown puts of k
#                       could have created it: the reveal took the earlier-called one (a
#                       guess no retry revisits); now the gap filling weighs the cas
#                       that saw the other's value.
#   gap_delete_seen     eight unknown deletes of k, called first, against a delete that
#                       counted k at revision 4: a put of k known only at 5 was taken as
#                       bringing k back, so the deletes "fit" revision 3.
#   gap_version_later   eight unknown puts of k with values nobody saw, against a version
#                       count one short: each was taken as the missing put, though the
#                       value the cas saw needs a put of its own after it.
#   gap_demand_clean    (issue 17, lin_unknown_1m_reads) revision 4 is a gap that a
#                       version count of p asks a put of p for: a txn putting p and q
#                       (called first) and a put of p alone. The txn's put of q must be
#                       undone by the unknown delete of q before q is read absent, and
#                       that delete then has no gap left (revision 5 is due to a
#                       demanded put of r, 8..12 to five demanded puts of s0..s4).
#                       Before the fix the gap went to the earlier-called txn, and every
#                       placement tried (24) ended in a violation: "unknown"; now the
#                       put of p alone, which needs nothing undone, ranks first: pass.
#   gap_create_exact    (issue 13, chaos seed 2893) revisions 3..9 are gaps: j was
#                       created at 3 and k at 4 (their reads' create revisions), each by
#                       one of two unknown puts; j needs one more put by 9. Before the
#                       fix revision 4 went to j's second put (due 10, before k's due 11)
#                       and k was "created" at 5, against its create revision 4; the
#                       retries spent their 24 placements on the unknown puts of unread
#                       keys p0..p7 that fill 6..9: "unknown". Now a put that creates
#                       its key at the creation revision a read shows is due there (and
#                       one that creates it later, or finds it present there, does not
#                       fit): pass.
foreach(gd_name create_choice delete_seen version_later demand_clean create_exact)
  fl_check_history(gap_${gd_name} 0 ${gd_rev_pass} --engine revision)
endforeach()

# The search engine judges historical ranges (served above the revision they ask, as
# inside a writing txn) against the first state at the revision they ask (issue 13,
# after unit.history.test_load_histrange for the revision engine).
#   search_histrange     a txn reads k at revision 2 and gets k's value of revision 3:
#                        the search passed it unseen (exit 0), then was undecided (exit
#                        4, judging it on the linearization found); now a violation
#                        (exit 1), as the revision engine says.
#   search_histrange_ok  the right answer: still a pass.
fl_check_history(search_histrange 1 "linearizability: fail \\(search engine"
                 --engine search)
fl_check_history(search_histrange_ok 0 ${gd_search_pass} --engine search)

# A gap the watches passed in silence (chaos seeds 116 and 375 with a longer ending):
#   gap_watch_silence      revisions 3 and 4 are gaps; the unknown put of k (called first)
#                          and two unknown puts of z outside the watch's range could fill
#                          them. The watch on [k, l) delivered 2 and 5, so its stream
#                          covered 3 and 4 without an event of k: k did not change there.
#                          Before the fix the put of k took revision 3, and the watch
#                          checker failed prev_kv at 5 (the member's v1, "expected" v2)
#                          on a correct history.
#   gap_watch_silence_bad  the same, the delete's prev_kv a value nobody wrote: still fails.
fl_check_history(gap_watch_silence 0 "watch: pass")
fl_check_history(gap_watch_silence_bad 1 "prev_kv: fail")

# The search engine's cache keeps of a state only what the operations still to
# linearize can observe (issue 13/15 §3): a key nobody reads again, its presence where
# only deletes and absent reads look (chk_search.c state_key), and unknown puts of keys
# no op observes are interchangeable (blind_puts, linked as twins).
#   search_memo_unread          gap_demand_present with six unknown puts of unread keys:
#                               a pass in 46966 steps before, 186 after (the test wants
#                               at most 3 digits).
#   search_gap_demand_present   eight of them: "unknown" (the cache's memory bound after
#                               3.1M steps, 8! orders of their mod revisions) before, a
#                               pass in 324 steps after.
#   search_gap_create_exact     the revision engine's gap_create_exact: "unknown" (5M
#                               steps, memory bound) before, a pass in 1.05M steps after.
fl_check_history(search_memo_unread 0
                 "\"engine\":\"search\",\"ops\":10,\"steps\":[0-9]{1,3}[,}]"
                 --engine search --json)
fl_check_test(search_gap_demand_present 0 ${gd_search_pass} --engine search
              ${FL_CHK_DATA}/gap_demand_present.jsonl)
fl_check_test(search_gap_create_exact 0 ${gd_search_pass} --engine search
              ${FL_CHK_DATA}/gap_create_exact.jsonl)
set_tests_properties(cli.check.search_memo_unread cli.check.search_gap_demand_present
                     cli.check.search_gap_create_exact PROPERTIES TIMEOUT 120)
