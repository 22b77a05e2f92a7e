-- rolling-replace.lua: the workflow the design document was written for — a managed
-- Kubernetes control plane upgraded by replacing its masters one at a time. Under client
-- load, each original member in turn is removed (leadership is first moved away from
-- it, as etcd's operators do) and a fresh member is added as a learner, waits until it
-- has caught up, and is promoted. Because a learner never counts for quorum and is
-- promoted only in sync, the cluster never needs a member that cannot answer: no write
-- stalls past the client timeout, the history stays linearizable, and at the end every
-- member ID is new.
-- Asserted on our own writes to the leader (none timed out, none slower than the
-- timeout), on the membership answers, on member IDs from status(), on nodes() and on the
-- acknowledged values read back; linearizability and raft_safety judge the history.
scenario {
  name = "rolling-replace",
  description = "replace every member one at a time (remove, add learner, catch up, promote) under load",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100, snapshot_count = 200 },
  clients  = { count = 4, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 60, keys = 16, watchers = 2 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
-- etcd's strict reconfiguration check refuses a change ("etcdserver: unhealthy
-- cluster") until the leader has been connected to every voter for 5 s.
run(5*s)
local original = {}
for _, n in ipairs(nodes()) do original[status(n).member_id] = n end

local log, stop = {}, false
spawn(function()
  local c, i = client(4), 0
  while not stop do
    i = i + 1
    local t = now()
    local r, err = c:put("roll/" .. i, "v" .. i, { node = leader() or nodes()[1] })
    log[#log + 1] = { i = i, ms = (now() - t) // ms, ok = r ~= nil, err = err }
    sleep(30*ms)
  end
end)
run(2*s)

for _, old in ipairs({ 1, 2, 3 }) do
  if leader() == old then
    local ok, e = move_leader(others(old)[1])
    expect(ok ~= nil, "leadership moves away from member " .. old .. " before its removal", e)
    run(200*ms)
  end
  local ok, e = member_remove(old)
  expect(ok ~= nil, "member " .. old .. " is removed", e)
  run(500*ms)
  local n, ae = member_add{ learner = true }
  expect(n ~= nil, "a fresh member is added as a learner in place of " .. old, ae)
  if not n then break end
  local promoted, perr = false, nil
  run_until(function()
    local ld = leader()
    if not ld or status(n).applied + 5 < status(ld).commit then return false end
    local pok, pe = member_promote(n)
    promoted, perr = pok ~= nil, pe
    return promoted
  end, 30*s, 200*ms)
  expect(promoted, "the new member " .. n .. " is promoted once caught up", perr)
  -- the next removal waits until the leader has been connected to the new voter for
  -- 5 s (etcd's strict reconfiguration check: "etcdserver: unhealthy cluster" before)
  run(5500*ms)
end
stop = true
run(1*s)

local ns = nodes()
local all_new = #ns == 3
for _, n in ipairs(ns) do
  local st = status(n)
  if original[st.member_id] or st.learner then all_new = false end
end
expect(all_new, "three voting members at the end, every member ID new",
       { nodes = ns, ids = { status(ns[1]).member_id, ns[2] and status(ns[2]).member_id,
                             ns[3] and status(ns[3]).member_id } })
local timed_out, slowest = 0, 0
for _, w in ipairs(log) do
  if not w.ok and (tostring(w.err):find("timed out") or tostring(w.err):find("deadline")) then
    timed_out = timed_out + 1
  end
  slowest = math.max(slowest, w.ms)
end
expect(#log > 100 and timed_out == 0 and slowest < 2000,
       "no write stalls past the client timeout during the replacement",
       { writes = #log, timed_out = timed_out, slowest_ms = slowest })
local c, lost = client(1), 0
for _, w in ipairs(log) do
  if w.ok then
    local r = c:get("roll/" .. w.i)
    if not (r and r.value == "v" .. w.i) then lost = lost + 1 end
  end
end
expect(lost == 0, "every acknowledged write is readable from the new members", lost)
