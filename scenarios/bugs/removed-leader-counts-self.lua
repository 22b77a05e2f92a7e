-- removed-leader-counts-self.lua (bug raft.removed_leader_counts_self): a leader that
-- removes itself manages, until the removal commits, a configuration it is not part
-- of; it keeps replicating but must not count itself in that configuration's
-- majorities (Raft thesis §4.2.2). Here a 4-member cluster removes its leader A. The
-- removal entry R reaches the three others, but C's and D's acknowledgements are held
-- and B's is lost; a write W that A appends after R reaches B only (A's messages to C
-- and D are held), and B's acknowledgement covers R and W. Correctly nothing commits:
-- the new configuration {B, C, D} needs more than B. With the bug (camunda#15231) A
-- counts itself with B as a majority of {B, C, D}: R and W commit, and A, which applied
-- its removal, stops. B then dies; C and D, which hold R but not W, elect a leader (two
-- of three) and fill W's index with their own entry: committed entries are gone.
-- Caught by raft_safety (committed entries replaced) and by the read-back of every
-- acknowledged write.
scenario {
  name = "removed-leader-counts-self",
  description = "a leader removing itself commits with one other member (bug: raft.removed_leader_counts_self)",
  cluster  = { nodes = 4, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 3000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c, acked = client(1), {}
for i = 1, 5 do
  if c:put("rl/a" .. i, "v" .. i) then acked[#acked + 1] = { "rl/a" .. i, "v" .. i } end
end
run(5*s) -- etcd's strict reconfiguration check: every voter connected for 5 s
local A = leader()
local rest = others(A)
local B, C, D = rest[1], rest[2], rest[3]
hold(C, A) -- C's and D's acknowledgements do not reach A for now
hold(D, A)
-- B's acknowledgement of R is lost on the way: its next one covers R and W together
failpoint("raft/after_save", { node = B, action = "drop", count = 1 })
spawn(function() member_remove(A) end)
local r_index = status(A).last_index + 1
run_until(function() return status(C).last_index >= r_index and status(D).last_index >= r_index end,
          1*s, 1*ms)
expect(status(B).last_index >= r_index and status(C).last_index >= r_index and
       status(D).last_index >= r_index, "the removal entry reached B, C and D", r_index)
hold(A, C)
hold(A, D)
-- W: appended by A after its removal, replicated to B only
for i = 1, 3 do
  spawn(function()
    local k, v = "rl/w" .. i, "w" .. i
    if client(2):put(k, v, { node = A, timeout = 10*s }) then acked[#acked + 1] = { k, v } end
  end)
end
run_until(function() return status(B).last_index >= r_index + 3 end, 1*s, 1*ms)
run(200*ms)
kill(B)
release(C, A)
release(D, A)
run(3*s)
heal_all()
run(3*s)
local lost = 0
for _, kv in ipairs(acked) do
  local r = client(3):get(kv[1])
  if not (r and r.value == kv[2]) then lost = lost + 1 end
end
expect(lost == 0, "every acknowledged write survives", { acked = #acked, lost = lost })
