-- learner-avoids-stall.lua: the growth of member-add-stall.lua done the way etcd
-- recommends, through learners. A learner receives the log but does not count for
-- quorum or vote, so adding one never changes what a write needs; it is promoted only
-- once it has caught up (etcd refuses earlier). The fourth member is added as a learner
-- with a slow disk, waits until caught up, is promoted; then one more member stalls
-- (its process stops answering) and the fifth is added the same way. At no point does
-- the configuration in force need a member that cannot answer, so no write times out.
-- Asserted on the history of our own writes, sent to the leader (none timed out, none slower than the
-- client timeout), on the learner/voter status of the new members, on the promotion
-- answers and on the final membership, under client load.
scenario {
  name = "learner-avoids-stall",
  description = "growing 3 -> 5 through learners (add, catch up, promote): no write times out",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 32 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
run(2*s)
local l = leader()
local slow = others(l)[1]

local log, stop = {}, false
spawn(function()
  local c, i = client(3), 0
  while not stop do
    i = i + 1
    local t = now()
    local r, err = c:put("grow/" .. i, "v" .. i, { node = leader() or 1 })
    log[#log + 1] = { start = t, ms = (now() - t) // ms, ok = r ~= nil, err = err }
    sleep(50*ms)
  end
end)

-- add a learner, wait until it has caught up, promote it (retrying while etcd says it
-- is not in sync yet); the fourth starts with a slow disk for its first 2 s
local function grow(tag, slow_disk)
  -- the strict reconfiguration check wants every voter (the one promoted last
  -- included) connected to the leader for 5 s
  run(5*s)
  local n, err = member_add{ learner = true }
  expect(n ~= nil, tag .. ": the member is added as a learner", err)
  if not n then return nil end
  if slow_disk then failpoint("raft/before_save", { node = n, action = "delay", delay_ms = 300 }) end
  run_until(function() return status(n).applied > 0 end, 10*s)
  expect(status(n).learner, tag .. ": it is a learner", status(n))
  if slow_disk then
    run(2*s) -- catching up slowly does not matter: a learner is no part of any quorum
    failpoint("raft/before_save", { node = n, action = "off" })
  end
  run_until(function()
    local ld = leader(); return ld ~= nil and status(n).applied + 2 >= status(ld).commit end, 10*s)
  local promoted, last_err = false, nil
  run_until(function()
    local ok, e = member_promote(n)
    promoted, last_err = ok ~= nil, e
    return promoted
  end, 30*s, 500*ms)
  expect(promoted, tag .. ": promoted once caught up", last_err)
  expect(not status(n).learner, tag .. ": it is a voter now", status(n))
  return n
end

local n4 = grow("fourth", true)
pause(slow)
local n5 = grow("fifth", false)
run(2*s)
resume(slow)
run(2*s)
stop = true
run(2*s)

local timed_out, failed, max_ms = 0, 0, 0
for _, w in ipairs(log) do
  if not w.ok then
    failed = failed + 1
    if tostring(w.err):find("timed out") or tostring(w.err):find("deadline") then timed_out = timed_out + 1 end
  end
  max_ms = math.max(max_ms, w.ms)
end
expect(#log > 20 and timed_out == 0 and failed == 0, "no write times out or fails while the cluster grows",
       { writes = #log, failed = failed, timed_out = timed_out })
expect(max_ms < 2000, "no write waits as long as the client timeout", max_ms)
expect(#nodes() == 5, "five members at the end", nodes())
local voters = 0
for _, n in ipairs(nodes()) do if not status(n).learner then voters = voters + 1 end end
expect(voters == 5, "all five are voters", voters)
