-- remove-leader.lua: removing the leader of a 4-member cluster. The removal is in force
-- as soon as the leader appends it, so from that entry on the leader counts the quorum
-- of the new configuration WITHOUT itself: the entry commits only once all three other
-- members have it (one of them has a slow disk here, so that moment is visible), and a
-- write that arrives after the removal entry, before the step-down, is replicated the
-- same way. Once the removal commits the leader does not step down: etcd 3.4's raft
-- keeps a removed leader leading (raft.go switchToConfig: "This node is leader and was
-- removed ... TODO(tbg): step down") and its server stops the member once it applied
-- its own removal (etcdserver: "the member has been permanently removed from the
-- cluster"); then no more heartbeats, the others time out, elect a new leader, and no
-- acknowledged write is lost.
-- Asserted on node events (the followers' conf_change times vs the moment the removal
-- returned, no step_down of the old leader, the new leader), on our own
-- write's timing, on member status (the followers' last contact with a leader, terms)
-- and on every acknowledged value read back, under client load.
scenario {
  name = "remove-leader",
  description = "a 4-node cluster removes its leader: committed without it, step-down, new election, nothing lost",
  cluster  = { nodes = 4, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 3000 },
  workload = { rate = 50, keys = 16 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local SLOW_MS = 500
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)

local acked, stop = {}, false
spawn(function()
  local c, i = client(3), 0
  while not stop do
    i = i + 1
    if c:put("rl/" .. i, "v" .. i) then acked[#acked + 1] = i end
    sleep(40*ms)
  end
end)
run(1*s)
local old = leader()
local term = status(old).term
local fol = others(old)
local slow = fol[1]
failpoint("raft/before_save", { node = slow, action = "delay", delay_ms = SLOW_MS })
run(1*s)

local t0 = now()
local removed, rerr, t_removed
spawn(function() removed, rerr = member_remove(old); t_removed = now() end)
-- a write sent right after the removal entry (through a fast follower, which forwards
-- it to the leader)
local w, w_err, w_done
spawn(function()
  sleep(5*ms)
  w, w_err = client(1):put("rl/late", "late", { node = fol[2], timeout = 10*s })
  w_done = now()
end)
run_until(function() return t_removed ~= nil end, 10*s)
expect(removed ~= nil, "the removal of the leader is accepted", rerr)

local appended = {}
for _, e in ipairs(node_events{ kind = "conf_change", since = t0 }) do
  if e.node ~= old and appended[e.node] == nil and e.reason == "remove" then appended[e.node] = e.at end
end
local last_at = 0
for _, n in ipairs(fol) do last_at = math.max(last_at, appended[n] or math.huge) end
expect(appended[slow] ~= nil and t_removed >= last_at and t_removed >= appended[fol[2]] + (SLOW_MS * 8 // 10) * ms,
       "the removal commits only once all three other members have it (the slow one last)",
       { removed_at_ms = t_removed // ms, slow_at_ms = appended[slow] and appended[slow] // ms,
         fast_at_ms = appended[fol[2]] and appended[fol[2]] // ms })

-- member_remove answers once the leader applied the removal, when its member stops
run(800*ms) -- less than an election timeout: nobody has campaigned yet
local sd = node_events{ node = old, kind = "step_down", since = t0 }
expect(#sd == 0, "the old leader does not step down: it leads until its member stops", sd[1] and sd[1].detail)
local heard_after = 0
for _, n in ipairs(fol) do
  local st = status(n)
  if st.leader_contact and st.leader_contact > t_removed + 50*ms then heard_after = heard_after + 1 end
end
expect(heard_after == 0, "no member hears a heartbeat once the old leader's member stopped", heard_after)

local elected = run_until(function()
  local l = leader(); return l ~= nil and l ~= old and status(l).term > term end, 10*s)
expect(elected, "a new leader is elected among the three", leader())
run_until(function() return w_done ~= nil end, 10*s)
expect(w ~= nil and w_done >= (appended[slow] or 0),
       "the write that arrived before the removal committed is acknowledged, no earlier than the slow member had the removal",
       { err = w_err, done_ms = w_done and w_done // ms, slow_at_ms = appended[slow] and appended[slow] // ms })
failpoint("raft/before_save", { node = slow, action = "off" })
run(2*s)
stop = true
run(1*s)
expect(#nodes() == 3 and status(old).removed, "three members remain; the old leader is removed", nodes())
local c, lost = client(2), {}
for _, i in ipairs(acked) do
  local r = c:get("rl/" .. i)
  if not (r and r.value == "v" .. i) then lost[#lost + 1] = i end
end
local late = c:get("rl/late")
expect(#acked > 20 and #lost == 0 and late and late.value == "late", "no acknowledged write is lost",
       { acked = #acked, lost = lost })
