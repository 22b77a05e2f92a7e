# bugs.cmake: the bug switches added for issue 13 (owner: bugs). Each bug scenario of
# scenarios/bugs/ listed below must fail with its switch on — exit 1, with the check
# named here among the failing ones — and pass with it off (exit 0), seeds 1..3
# (sweeps of seeds 1..20 are run by hand: faultline sweep FILE --seeds 1..20 --bug NAME).
# Also: every row of `faultline list bugs` names an existing scenario and a documented
# issue. Each run writes its own database in the build tree.
set(FL_BUGS_DB ${CMAKE_BINARY_DIR}/tests/bugs)
file(MAKE_DIRECTORY ${FL_BUGS_DB})

# scenario-file-name=bug.name=check that must catch it
set(FL_BUGS_SCENARIOS
  learner-refuses-vote=raft.learner_refuses_vote=expect
  removed-leader-counts-self=raft.removed_leader_counts_self=raft_safety
  heartbeat-commit-unmatched=raft.heartbeat_commit_unmatched=raft_safety
  apply-before-wal-sync=server.apply_before_wal_sync=raft_safety
  defrag-stale-consistent-index=server.defrag_stale_consistent_index=converge
  txn-drops-ranges=server.txn_drops_ranges=expect
  restore-skips-tombstone=mvcc.restore_skips_tombstone=watch
  watch-compacted-lost=mvcc.watch_compacted_lost=watch
  restore-keeps-watchers-synced=mvcc.restore_keeps_watchers_synced=watch
  restore-lowers-future-watch=mvcc.restore_lowers_future_watch=watch)

fl_bug_scenarios(${FL_BUGS_DB} ${FL_BUGS_SCENARIOS})

# The catalogue: at least 20 switches, each with its scenario file and an issue number.
set(FL_BUGS_LIST [=[
import os, re, subprocess, sys
bin_, repo = sys.argv[1:3]
rows = subprocess.run([bin_, "list", "bugs"], capture_output=True, text=True).stdout.splitlines()
bad = []
for row in rows:
    parts = row.split("  ")
    if len(parts) < 3:
        bad.append("malformed row: " + row)
        continue
    name, scn, desc = parts[0], parts[1], "  ".join(parts[2:])
    if not os.path.exists(os.path.join(repo, scn)):
        bad.append(name + ": no scenario " + scn)
    if name.split(".")[0] not in ("raft", "mvcc", "server", "client"):
        bad.append(name + ": unknown module")
print(len(rows), "bug switches")
if len(rows) < 20:
    bad.append("fewer than 20 bug switches")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
]=])
fl_test(cli.list.bugs_catalogue cli 30 python3 -c "${FL_BUGS_LIST}" ${FL_BIN} ${CMAKE_SOURCE_DIR})
