# mvcc_scenarios.cmake: the MVCC/server scenarios (owner: mvcc-scenarios).
# Every scenario of scenarios/seeds/ listed below must pass (exit 0) for seeds 1..3;
# every bug scenario of scenarios/bugs/ listed below must fail (exit 1, a checker or an
# expect on observed data) with its bug switch on and pass with it off, seeds 1..3.
set(FL_MSCN_DB ${CMAKE_BINARY_DIR}/tests/mvcc_scenarios)
file(MAKE_DIRECTORY ${FL_MSCN_DB})
set(FL_MSCN_CLI ${CMAKE_SOURCE_DIR}/tests/scenario/expect_cli.sh)

set(FL_MSCN_SEEDS revisions lease-expiry watch-leader-change nospace defrag backup-restore
  auto-compaction-revision auto-compaction-periodic compaction)
set(FL_MSCN_BUGS stale-read=mvcc.stale_read revision-reset-on-restart=mvcc.revision_reset_on_restart
  watch-old-after-partition=mvcc.watch_old_after_partition
  progress-before-events=mvcc.progress_before_events
  watch-skip-on-compact=mvcc.watch_skip_on_compact restore-keeps-ids=server.restore_keeps_ids)

foreach(name ${FL_MSCN_SEEDS})
  foreach(seed 1 2 3)
    add_test(NAME scenario.seeds.${name}.${seed}
      COMMAND ${FL_MSCN_CLI} 0 - ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/seeds/${name}.lua
              --seed ${seed} --db ${FL_MSCN_DB}/${name}-${seed}.db)
    set_tests_properties(scenario.seeds.${name}.${seed} PROPERTIES LABELS scenario TIMEOUT 120)
  endforeach()
endforeach()

# Each entry: scenario-file-name=bug.name
foreach(entry ${FL_MSCN_BUGS})
  string(REPLACE "=" ";" parts ${entry})
  list(GET parts 0 name)
  list(GET parts 1 bug)
  foreach(seed 1 2 3)
    add_test(NAME scenario.bugs.${name}.on.${seed}
      COMMAND ${FL_MSCN_CLI} 1 - ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/bugs/${name}.lua
              --seed ${seed} --bug ${bug} --db ${FL_MSCN_DB}/${name}-on-${seed}.db)
    add_test(NAME scenario.bugs.${name}.off.${seed}
      COMMAND ${FL_MSCN_CLI} 0 - ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/bugs/${name}.lua
              --seed ${seed} --db ${FL_MSCN_DB}/${name}-off-${seed}.db)
    set_tests_properties(scenario.bugs.${name}.on.${seed} scenario.bugs.${name}.off.${seed}
      PROPERTIES LABELS scenario TIMEOUT 120)
  endforeach()
endforeach()
