-- heartbeat-commit-unmatched.lua (bug raft.heartbeat_commit_unmatched): a leader may
-- tell a follower to commit only up to what it knows the follower holds (its match
-- index), because the follower's log past that point may be a deposed leader's
-- obsolete suffix. Here the leader is cut off from the others while clients keep
-- writing to it: it appends those entries in its old term but never commits them. The
-- other two elect a new leader and commit more entries than the old leader holds.
-- The old leader restarts while cut off, so the frames held for it behind the partition
-- are gone; when the partition heals, the new leader's first heartbeat reaches it
-- before any append has repaired its log. Correctly that heartbeat carries min(match, commit)
-- = 0 and the old leader commits nothing until its log matches. With the bug
-- (scylladb#9965, atomix/copycat#265) it carries the whole commit index, and the old
-- leader, which caps it only at its own last index, commits and applies its obsolete
-- entries. Caught by raft_safety (state machine safety: two entries applied at one
-- index) and by converge; the expect checks every acknowledged write reads back.
scenario {
  name = "heartbeat-commit-unmatched",
  description = "a deposed leader with obsolete entries hears the new leader's heartbeat (bug: raft.heartbeat_commit_unmatched)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 1000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local function leader_among(list)
  for _, n in ipairs(list) do
    local st = status(n)
    if st.alive and st.leader then return n end
  end
  return nil
end

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local acked = {}
for i = 1, 5 do
  if c:put("hb/a" .. i, "v" .. i) then acked[#acked + 1] = { "hb/a" .. i, "v" .. i } end
end
run(300*ms)
local old = leader()
local rest = others(old)
partition({ old }, rest)
-- writes sent to the cut-off leader: appended there in its old term, never committed
for i = 1, 6 do
  spawn(function() client(2):put("hb/x" .. i, "obsolete" .. i, { node = old, timeout = 400*ms }) end)
end
run(200*ms)
local stale_last = status(old).last_index
expect(run_until(function() return leader_among(rest) ~= nil end, 10*s),
       "the majority elects a new leader", leader_among(rest))
local new = leader_among(rest)
local i = 0
while status(new).commit <= stale_last + 3 and i < 50 do
  i = i + 1
  if c:put("hb/b" .. i, "w" .. i, { node = new }) then acked[#acked + 1] = { "hb/b" .. i, "w" .. i } end
end
expect(status(new).commit > stale_last, "the new leader committed past the old leader's log",
       { commit = status(new).commit, old_last = stale_last })
-- the old leader restarts (its log is on disk): the frames held for it behind the
-- partition die with the process, so the first thing it hears is a heartbeat
kill(old)
run(100*ms)
restart(old)
run(1*s)
heal()
run(3*s)
heal_all()
run(2*s)
local lost = 0
for _, kv in ipairs(acked) do
  local r = client(3):get(kv[1])
  if not (r and r.value == kv[2]) then lost = lost + 1 end
end
expect(lost == 0, "every acknowledged write reads back", { acked = #acked, lost = lost })
