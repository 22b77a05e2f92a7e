-- learner-promote.lua: etcd's learner rules. A learner receives the log but does not
-- count for quorum (nor vote, nor campaign). It can be promoted to a voter only once
-- its log has at least 90% of the leader's (etcd's readyPercent); earlier the leader
-- refuses with `etcdserver: can only promote a learner member which is in sync with
-- leader`. A learner with a very slow disk joins a cluster with history; promotion is
-- refused while it is behind; with one voter also stopped, writes still commit on the
-- two voters (had the learner counted, 3 of 4 would be needed and writes would stall);
-- once its disk is normal and it has caught up, the promotion is accepted.
-- Asserted on the exact refusal text, our own writes to the leader, node events (the
-- learner never campaigns), member status (learner flag, applied index) and the
-- promotion answer, under client load.
scenario {
  name = "learner-promote",
  description = "a learner does not count for quorum; promotion refused while behind, accepted once caught up",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 200 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 30, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local NOT_READY = "etcdserver: can only promote a learner member which is in sync with leader"
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
local c = client(3)
for i = 1, 300 do c:put("hist/" .. i, "v" .. i) end
local l = leader()
local t0 = now()
local n, err = member_add{ learner = true }
expect(n ~= nil, "the learner is added", err)
if not n then return end
failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 500 })
run(300*ms)
local ok, perr = member_promote(n)
expect(ok == nil and perr == NOT_READY, "promotion is refused with etcd's text while the learner is behind",
       { ok = ok, err = perr, applied = status(n).applied, leader_commit = status(l).commit })
run_until(function() return status(n).applied > 0 end, 10*s)
expect(status(n).learner, "it is a learner (in its own configuration)", status(n).learner)

-- the learner is no part of the quorum: with one voter stopped and the learner slow,
-- writes to the leader still commit on the two remaining voters
local stopped = others(l)[1] == n and others(l)[2] or others(l)[1]
pause(stopped)
local acked, slowest = 0, 0
for i = 1, 20 do
  local t = now()
  if c:put("lq/" .. i, "v", { node = l }) then acked = acked + 1 end
  slowest = math.max(slowest, (now() - t) // ms)
end
expect(acked == 20 and slowest < 500, "with a voter stopped, writes commit without the (slow) learner",
       { acked = acked, slowest_ms = slowest })
resume(stopped)

failpoint("raft/before_save", { node = n, action = "off" })
local caught = run_until(function()
  local ld = leader(); return ld ~= nil and status(n).applied >= status(ld).commit end, 20*s)
expect(caught, "the learner catches up once its disk is normal", status(n))
local campaigns = #node_events{ node = n, kind = "campaign", since = t0 } +
                  #node_events{ node = n, kind = "prevote", since = t0 }
expect(campaigns == 0, "the learner never campaigned", campaigns)
local pok, perr2 = member_promote(n)
expect(pok ~= nil, "promotion is accepted once the learner has caught up", perr2)
run(500*ms)
expect(not status(n).learner and #nodes() == 4, "it is a voter of a 4-member cluster",
       { learner = status(n).learner, nodes = nodes() })
local r = c:put("after/promote", "x")
expect(r ~= nil, "writes are acknowledged after the promotion", r)
