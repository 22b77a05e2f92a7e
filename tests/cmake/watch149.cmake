# watch149.cmake: the revision engine places an unknown-outcome op that a watch event
# reveals only where one branch of it could have made the whole revision the watches
# delivered (issue 13, chaos seed 149 of the whole-cluster restore WIP). Histories:
#   watch149_reveal_branch   an unknown txn (compare fails in the state there; its
#                            success branch deletes k/a and puts the watched k/b) and
#                            an unknown plain delete of k/a, events "delete k/a" at 3
#                            and "put k/c" at 4. The txn, called first, was revealed at
#                            3; its replay wrote nothing there, the placement was
#                            undecided, and the history was judged again without the
#                            watch events: the guess put the delete at 4, and the watch
#                            checker failed reliable at 4 against that guess.
#   watch149_reveal_made     the same, but the events of 3 are the txn's whole success
#                            branch: the txn is still the one revealed there.
#   watch149_reveal_outside  the txn alone: nothing recorded made revision 3, its
#                            events show an outside write (the search engine passes
#                            it); the txn revealed there failed linearizability.
fl_check_history(watch149_reveal_branch 0 "watch: pass")
fl_check_history(watch149_reveal_made 0
                 "pass \\(revision engine, 6 operations, 2 unknown-outcome placed\\)")
fl_check_test(watch149_reveal_made_watch 0 "watch: pass"
              ${FL_CHK_DATA}/watch149_reveal_made.jsonl)
fl_check_history(watch149_reveal_outside 0 "linearizability: pass \\(revision engine")
fl_check_test(watch149_reveal_outside_search 4 "linearizability: pass \\(search engine"
              ${FL_CHK_DATA}/watch149_reveal_outside.jsonl --engine search)
