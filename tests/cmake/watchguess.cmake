# watchguess.cmake (issue 13): the watch checker never takes a guessed placement as fact.
# When the revision engine, judging with the watch events, is undecided and judging
# again without them passes by guessing where an unknown-outcome op took effect, the
# changes from the first guessed revision on are one placement among several.
#   watchguess_fallback  unknown puts k/c and k/b fill revisions 3 and 4 (watch events:
#                        k/b at 3, k/c at 4); an unknown txn on k/e whose compare fails
#                        is revealed at 7 by its event (writing nothing: undecided, as
#                        a plain put of k/e=z was there too). Without the events the
#                        engine guessed k/c at 3, k/b at 4: "reliable" failed at 4
#                        against the guess (exit 1) before the fix, though the history
#                        (k/b 3, k/c 4, the plain put at 7) passes every check. Now:
#                        unknown, saying why.
#   watchguess_before    the same with a wrong event at revision 2, before the first
#                        guess: still a failure of reliable.
fl_check_history(watchguess_fallback 4
                 "from revision 3 on .*reliable at revision 4 not judged")
fl_check_test(watchguess_fallback_lin 4 "linearizability: pass \\(revision engine"
              ${FL_CHK_DATA}/watchguess_fallback.jsonl)
fl_check_history(watchguess_before 1 "broke reliable: watch 1, revision 2")
