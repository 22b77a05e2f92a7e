-- multiple-conf-changes.lua (bug raft.multiple_conf_changes): why Raft allows at most
-- one uncommitted configuration entry. A configuration is in force as soon as it is
-- appended, so two changes in flight can give configurations whose majorities do not
-- overlap. A 5-member cluster is split {leader, f} | {three others}; f's answers to the
-- leader are held back, and the leader is asked at once to remove two of the other
-- three. Correctly, the second removal is refused while the first is uncommitted, and the
-- first cannot commit with two of four voters: only the majority side (which elects its
-- own leader) commits. With the bug the leader appends both removals: its configuration
-- is then {leader, f, one other}, of which it has a majority as soon as f's answers are
-- released, so it commits entries at the indexes where the majority side has already
-- committed others. Check-quorum is off (the Raft library's default) so the cut-off
-- leader keeps leading while the other side elects. Caught by raft_safety (a committed
-- entry replaced); also asserted: the second removal is refused.
scenario {
  name = "multiple-conf-changes",
  description = "two uncommitted configuration changes give disjoint majorities (bug: raft.multiple_conf_changes)",
  cluster  = { nodes = 5, election_ms = 1000, heartbeat_ms = 100, check_quorum = false },
  clients  = { count = 4, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check wants every voter connected for 5 s first
run(5*s)
local l = leader()
local rest = others(l)
local f = rest[1]
local minority = { l, f }
local majority = { rest[2], rest[3], rest[4] }
partition(minority, majority)
hold(f, l)                -- f's acknowledgements reach the leader only later
local first, second
spawn(function() first = { member_remove(majority[3]) } end)
spawn(function() second = { member_remove(majority[2]) } end)
run(4*s)                  -- the majority side elects its own leader and commits
release(f, l)
run(5*s)
expect(second ~= nil and second[1] == nil,
       "a second configuration change is refused while the first is uncommitted",
       second and { ok = second[1], err = second[2] })
heal()
run(3*s)
