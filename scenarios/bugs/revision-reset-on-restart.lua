-- revision-reset-on-restart.lua (bug mvcc.revision_reset_on_restart): etcd's store
-- revision never goes back, even across a crash of every member: a restarted member
-- resumes from the revision it had persisted. With the bug (etcd#17780-like) a
-- restarted member recomputes its revision from the newest key that is still alive,
-- so after a run of deletes it hands out revisions it already used. Asserts on the
-- revisions read back: the first write after a full-cluster restart gets a revision
-- above every revision acknowledged before the crash, and a read's header revision
-- never goes below them; the linearizability checker judges the history.
scenario {
  name = "revision-reset-on-restart",
  description = "puts, deletes, every member killed and restarted: the revision continues (bug: mvcc.revision_reset_on_restart)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 4, mix = { put = 0, get = 4, delete = 0, txn = 0, range = 1 } },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local last = 0
for i = 1, 10 do
  local r = c:put("reset/k" .. i, "v" .. i)
  if r then last = math.max(last, r.revision) end
end
for i = 1, 10 do
  local r = c:delete("reset/k" .. i)
  if r then last = math.max(last, r.revision) end
end
expect(last >= 21, "twenty writes were acknowledged", last)
run(500*ms)

for _, n in ipairs(nodes()) do kill(n) end
run(200*ms)
for _, n in ipairs(nodes()) do restart(n) end
run_until(function() return leader() ~= nil end, 10*s)
run(1*s)

local g = c:get("reset/k1")
expect(g ~= nil and g.revision >= last, "a read after the restart reports a revision no lower than before",
       { before = last, after = g and g.revision })
local p = c:put("reset/after", "1")
expect(p ~= nil and p.revision == last + 1, "the first write after the restart takes the next revision",
       { before = last, after = p and p.revision })
heal_all()
run(1*s)
