# Which CI pass runs which test (.ci/run). The plain pass (`make test`) runs every test.
# The sanitizer pass runs ASan/UBSan over every code path once, not every seed: it
# leaves out
#   - `slow`: the long sweeps and shrinks, labelled where they are defined;
#   - `repeat`: seeds 2 and up of a scenario whose seed 1 it runs (scenario.*.2,
#     scenario.*.seed3, ...): the same code on other draws;
#   - `long`: the tests below, each over ~4 s in the plain pass on 2 cores (10-40 s under
#     ASan) whose code the sanitizer pass reaches through shorter tests: sweeps and
#     shrinks of many runs, digest comparisons (.ci/run compares the two builds' digests
#     itself), and every cli.explore test (the explore build in .ci/run runs them all
#     again, with its coverage callbacks).
#   - `timing`: live tests whose claim holds by a wall-time margin against real etcd,
#     which the sanitizer's slower harness moves: live.etcd_target.lease_cut failed
#     there once (2 renewals answered across the cut), and passes in the plain pass.
# Together they were about 60% of the sanitizer pass's time (CI took 40 minutes with
# them in; its budget is 30). live.member_target.raft_safety_bug is long: 130 s of a
# bundled scenario waiting out its lost writes; raft_safety_pass covers its code.
set(fl_long_tests
    cli.bench.cluster_compacts
    cli.shrink.json
    cli.sweep.examples
    cli.sweep.faulty
    cli.sweep.shard
    cli.sweep.shard_auto_merge
    determinism.chaos
    determinism.shrink
    determinism.smoke
    live.member_target.raft_safety_bug
    scenario.lua.bundled_run
    scenario.seeds.auto-compaction-periodic.1
    scenario.shrink.bug_stale_read
    scenario.shrink.expect
    swarm.check)
get_property(fl_all_tests DIRECTORY PROPERTY TESTS)
# fl_label_named(LABEL NAME...): LABEL on each named test; a name that is no test fails.
function(fl_label_named label)
  foreach(t ${ARGN})
    if(NOT t IN_LIST fl_all_tests)
      message(FATAL_ERROR "tests/ci_passes.cmake: no test named ${t}")
    endif()
    set_property(TEST ${t} APPEND PROPERTY LABELS ${label})
  endforeach()
endfunction()
fl_label_named(long ${fl_long_tests})
fl_label_named(timing live.etcd_target.lease_cut)
foreach(t ${fl_all_tests})
  if(t MATCHES "^scenario\\..*\\.(seed)?[2-9]$")
    set_property(TEST ${t} APPEND PROPERTY LABELS repeat)
  elseif(t MATCHES "^cli\\.explore\\.")
    set_property(TEST ${t} APPEND PROPERTY LABELS long)
  endif()
endforeach()
