-- replication-slow-follower.lua: a leader commits an entry once a majority of voters
-- (itself included) has it on disk, so one very slow follower does not hold writes back.
-- One follower's disk becomes very slow (every WAL write + fsync takes 400 ms more): the
-- leader keeps committing at the speed of the other follower while the slow one's log
-- falls behind the commit index; once its disk is normal again it catches up.
-- Asserted on our own writes sent to the leader (every one acknowledged, none waiting
-- for the slow disk), on member status (the leader's commit index running ahead of what
-- the slow follower has applied, then the follower catching up) and the values read back, under client load.
scenario {
  name = "replication-slow-follower",
  description = "one very slow follower: writes still commit on the quorum",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 100, keys = 8 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
local l = leader()
local slow = others(l)[1]
failpoint("raft/before_save", { node = slow, action = "delay", delay_ms = 400 })

local c = client(3)
local acked, failed, max_ms, behind = 0, 0, 0, 0
for i = 1, 60 do
  local t = now()
  local r = c:put("slow/" .. i, "v" .. i, { node = l })
  if r then acked = acked + 1 else failed = failed + 1 end
  max_ms = math.max(max_ms, (now() - t) // ms)
  local ls, ss = status(l), status(slow)
  if ls.commit > ss.applied + 5 then behind = behind + 1 end
  sleep(50*ms)
end
expect(failed == 0 and acked == 60, "every write is acknowledged while the follower is slow",
       { acked = acked, failed = failed })
expect(max_ms < 400, "no write waits for the slow follower's disk", { max_ms = max_ms })
expect(behind > 10, "the leader commits entries the slow follower does not have yet",
       { samples_behind = behind, leader_commit = status(l).commit, slow_applied = status(slow).applied })
expect(leader() == l, "the leader keeps its leadership", leader())

failpoint("raft/before_save", { node = slow, action = "off" })
local caught = run_until(function()
  return status(slow).applied >= status(l).commit and status(l).commit > 0 end, 10*s)
expect(caught, "the slow follower catches up once its disk is normal",
       { leader_commit = status(l).commit, slow_applied = status(slow).applied })
local missing = 0
for i = 1, 60 do
  local r = c:get("slow/" .. i, { node = slow, serializable = true })
  if not (r and r.value == "v" .. i) then missing = missing + 1 end
end
expect(missing == 0, "the slow follower serves every acknowledged write", missing)
