# CLI tests owned by engineer "history": `faultline bench` argument handling.
# The full benchmark is not run here (tests never time anything; CI runs
# `faultline bench --json` separately when it wants figures).
add_test(NAME cli.bench.bad_option
  COMMAND sh -c "out=$(\"$0\" bench --bogus 2>&1); rc=$?; test $rc -eq 2 && echo \"$out\" | grep -q \"unknown option '--bogus'\""
          ${FL_BIN})
add_test(NAME cli.bench.missing_corpus
  COMMAND sh -c "out=$(\"$0\" bench --corpus /nonexistent/corpus 2>&1); rc=$?; test $rc -eq 2 && echo \"$out\" | grep -q /nonexistent/corpus"
          ${FL_BIN})
add_test(NAME cli.bench.corpus_needs_arg
  COMMAND sh -c "\"$0\" bench --corpus 2>/dev/null; test $? -eq 2" ${FL_BIN})
set_tests_properties(cli.bench.bad_option cli.bench.missing_corpus cli.bench.corpus_needs_arg
  PROPERTIES LABELS cli TIMEOUT 30)
add_test(NAME cli.bench.only_unknown_group
  COMMAND sh -c "out=$(\"$0\" bench --only sim,bogus 2>&1); rc=$?; test $rc -eq 2 && echo \"$out\" | grep -q \"unknown group 'bogus'\"" ${FL_BIN})
add_test(NAME cli.bench.only_history
  COMMAND sh -c "out=$(\"$0\" bench --json --only history); test $? -eq 0 && echo \"$out\" | grep -q '\"history_rows_per_s\": [0-9]' && echo \"$out\" | grep -q '\"sim_events_per_s\": null'" ${FL_BIN})
set_tests_properties(cli.bench.only_unknown_group cli.bench.only_history PROPERTIES LABELS cli)
# The saturated cluster workload is deterministic: a fixed simulated length commits
# the same number of entries on every run (the figure itself is wall time, untested).
add_test(NAME cli.bench.cluster_fixed_work
  COMMAND sh -c "a=$(FL_BENCH_SIM_MS=200 \"$0\" bench --json --only cluster | grep cluster_saturation_commits); b=$(FL_BENCH_SIM_MS=200 \"$0\" bench --json --only cluster | grep cluster_saturation_commits); echo \"$a / $b\"; test -n \"$a\" && test \"$a\" = \"$b\" && ! echo \"$a\" | grep -q ': 0,'" ${FL_BIN})
set_tests_properties(cli.bench.cluster_fixed_work PROPERTIES LABELS cli TIMEOUT 120)
# The saturated cluster is compacted as it goes (bench_cluster.c: its last 10,000
# revisions), so its memory does not grow with the commits a fast machine makes; the
# compactions are reported and not counted as commits.
add_test(NAME cli.bench.cluster_compacts
  COMMAND sh -c "o=$(FL_BENCH_SIM_MS=1500 \"$0\" bench --json --only cluster); echo \"$o\" | grep -E 'saturation_(commits|compactions)'; echo \"$o\" | grep -Eq '\"cluster_saturation_compactions\": [1-9][0-9]*,?$'" ${FL_BIN})
set_tests_properties(cli.bench.cluster_compacts PROPERTIES LABELS cli TIMEOUT 120)
