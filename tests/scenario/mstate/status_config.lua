-- status_config.lua: status(n) carries etcd's Maintenance Status fields beside ours, and
-- config(n) reads a member's configuration. With no knob set every member runs with
-- etcd's defaults (etcd-facts B.1): snapshot-count 100000 (3.4/3.5), 5000 entries kept
-- for slow followers, a 2 GiB backend quota, auto-compaction off (etcd's periodic mode
-- with retention 0), heartbeat 100 ms, election 1000 ms, request timeout 5 s + 2 x
-- election, pre-vote and check-quorum on, strict reconfiguration on, 1.5 MiB requests,
-- 128 txn ops, 1 MiB raft messages, 512 in flight, watch progress every 10 minutes.
-- Must pass.
scenario {
  name = "status-config",
  cluster  = { nodes = 3 },
  clients  = { count = 1 },
  workload = { rate = 20, keys = 4 },
  checks   = { "linearizability", "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader", leader())
run(2*s)
local want = {
  snapshot_count = 100000, snapshot_catchup_entries = 5000, quota_backend_bytes = 2 * 1024 * 1024 * 1024,
  auto_compaction_mode = "none", auto_compaction_retention = 0, heartbeat_ms = 100,
  election_ms = 1000, request_timeout_ms = 7000, prevote = true, check_quorum = true,
  strict_reconfig_check = true, max_request_bytes = 1572864, max_txn_ops = 128,
  max_msg_bytes = 1048576, max_inflight_msgs = 512, progress_notify_ms = 600000, fsync_us = 1000,
}
for _, n in ipairs(nodes()) do
  local cf = config(n)
  for k, v in sorted_pairs(want) do
    expect(cf[k] == v, "config(" .. n .. ")." .. k .. " is etcd's default", { want = v, got = cf[k] })
  end
end

local l = leader()
local c = client(1)
expect(c:put("s/1", string.rep("v", 1000)) ~= nil, "a write")
run(500*ms)
for _, n in ipairs(nodes()) do
  local st = status(n)
  expect(st.raft_term == st.term and st.raft_index == st.commit and st.raft_applied_index == st.applied
         and st.is_learner == st.learner and st.is_learner == false,
         "status: etcd's raft fields beside ours (raft_index is the commit index)", st)
  expect(st.raft_index >= 3 and st.raft_applied_index <= st.raft_index, "status: Raft figures", st)
  expect(st.db_size > 1000 and st.db_size_in_use > 0 and st.db_size_in_use <= st.db_size,
         "status: db sizes", { db_size = st.db_size, in_use = st.db_size_in_use })
  expect(st.quota_backend_bytes == 2 * 1024 * 1024 * 1024, "status: the quota in force", st.quota_backend_bytes)
  expect(type(st.alarms) == "table" and #st.alarms == 0 and next(st.alarms) == nil, "status: no alarm", st.alarms)
  expect(type(st.version) == "string" and st.version:match("^3%.%d+%.%d+") ~= nil,
         "status: an etcd version string", st.version)
  expect(st.leader == (n == l) and st.leader_node == l, "status: leader stays the boolean", st)
end
