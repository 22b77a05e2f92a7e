# mvcc_scenarios.cmake: the MVCC/server scenarios (owner: mvcc-scenarios).
# Every scenario of scenarios/seeds/ listed below must pass (exit 0) for seeds 1..3;
# every bug scenario of scenarios/bugs/ listed below must fail (exit 1, a checker or an
# expect on observed data) with its bug switch on and pass with it off, seeds 1..3.
set(FL_MSCN_DB ${CMAKE_BINARY_DIR}/tests/mvcc_scenarios)
file(MAKE_DIRECTORY ${FL_MSCN_DB})

set(FL_MSCN_SEEDS revisions lease-expiry watch-leader-change nospace defrag backup-restore
  auto-compaction-revision auto-compaction-periodic compaction)
set(FL_MSCN_BUGS stale-read=mvcc.stale_read revision-reset-on-restart=mvcc.revision_reset_on_restart
  watch-old-after-partition=mvcc.watch_old_after_partition
  progress-before-events=mvcc.progress_before_events
  watch-skip-on-compact=mvcc.watch_skip_on_compact restore-keeps-ids=server.restore_keeps_ids)

fl_seed_scenarios(${FL_MSCN_DB} - ${FL_MSCN_SEEDS})
# Each entry: scenario-file-name=bug.name
fl_bug_scenarios(${FL_MSCN_DB} ${FL_MSCN_BUGS})
