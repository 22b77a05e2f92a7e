# raft_scenarios.cmake: the Raft scenarios (owner: raft-scenarios).
# Every scenario of scenarios/seeds/ listed below must pass (exit 0) for seeds 1..3;
# every bug scenario of scenarios/bugs/ listed below must fail (exit 1: raft_safety,
# linearizability or an expect on observed data) with its bug switch on and pass with it
# off, seeds 1..3. Sweeps over seeds 1..20 are run by hand (faultline sweep).
set(FL_RSCN_DB ${CMAKE_BINARY_DIR}/tests/raft_scenarios)
file(MAKE_DIRECTORY ${FL_RSCN_DB})

set(FL_RSCN_SEEDS rolling-replace election-fresh leader-down prevote-rejoin
  replication-slow-follower log-retention member-add-snapshot member-add-twice
  member-add-stall learner-avoids-stall learner-promote remove-leader remove-below-quorum
  leader-transfer reconfig-unhealthy)
set(FL_RSCN_BUGS vote-ignores-log=raft.vote_ignores_log commit-old-term=raft.commit_old_term
  ack-before-fsync=raft.ack_before_fsync multiple-conf-changes=raft.multiple_conf_changes)

fl_seed_scenarios(${FL_RSCN_DB} - ${FL_RSCN_SEEDS})
# Each entry: scenario-file-name=bug.name
fl_bug_scenarios(${FL_RSCN_DB} ${FL_RSCN_BUGS})

# The observation calls the scenarios above assert on: status(n), node_events{},
# restart(n, { prevote }); and a bad restart option names itself.
fl_run_test(scenario.lua.api_observe scenario 60 0 - ${FL_SCN}/api_observe.lua --seed 1
  --db ${FL_RSCN_DB}/api_observe.db)
fl_run_test(cli.lua.restart_option cli 30
  2 "errors/restart_opt.lua:2: unknown option 'bogus' in restart options"
  ${FL_SCN}/errors/restart_opt.lua --db ${FL_RSCN_DB}/e.db)
