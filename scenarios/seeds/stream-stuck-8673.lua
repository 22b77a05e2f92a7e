-- stream-stuck-8673: etcd#8673 for streams. A follower is cut off from its peers but
-- still reachable by clients and still answering keepalive pings. Clients 1-4 (one
-- per policy: pinned_random, pinned_blacklist, round_robin, health_aware) each keep
-- a 10 s lease alive with a key attached and watch the workload's keys, with no
-- unary traffic of their own; clients 5-8 do the same with require_leader on both
-- streams; client 9 (health_aware) writes. Both pinned policies are pinned to node 1
-- (every other member is down while the clients connect), which is then isolated.
-- Asserted on observed data:
--   * without require_leader, the pinned_blacklist keep-alive stream stuck on node 1
--     never reaches the leader: no answer and no error reach the client, its lease
--     expires and its key vanishes from the cluster while the client still holds the
--     stream open (it gives up only after a TTL of silence); its watch stays silent
--     across the partition;
--   * with require_leader, node 1 closes both streams with `etcdserver: no leader`
--     and the client re-establishes them on another member: the lease's key
--     survives, keep-alives are answered again, the watch catches up;
--   * health_aware moves its streams off the cut-off member on its own: lease kept,
--     watch stall below two election timeouts;
--   * every require_leader client (any policy) and health_aware keep their lease.
scenario {
  name = "stream-stuck-8673",
  description = "etcd#8673 streams: keep-alive and watch stuck on a cut-off member; require_leader frees them",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = {
    balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware",
                  "pinned_random", "pinned_blacklist", "round_robin", "health_aware",
                  "health_aware" },
    timeout_ms = 2000,
  },
  checks = { "linearizability", "watch", "raft_safety", "converge" },
}

local TTL = 10
local PART = 15 * s

-- The pinned policies pin the first member that answers: make it node 1.
kill(2)
kill(3)
run(300 * ms)
restart(2)
restart(3)
expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
if leader() == 1 then
  for _ = 1, 25 do if move_leader(2) then break end run(200 * ms) end -- (on etcd node 2 may still be starting)
end
expect(run_until(function() local l = leader(); return l ~= nil and l ~= 1 end, 10 * s),
       "node 1 is a follower", leader())

local writer = client(9)
-- A watch on the leased keys shows each expiry as a delete event (and lets the
-- checkers place the revocation in the history).
local deleted = {}
writer:watch("lease/", { prefix = true, callback = function(ev)
  if ev.type == "delete" and not deleted[ev.key] then deleted[ev.key] = now() end
end })
local leases, kas = {}, {}
for i = 1, 8 do
  local c = client(i)
  local l, err = c:lease_grant(TTL)
  expect(l ~= nil, "client " .. i .. " gets a lease", err)
  leases[i] = l and l.id or 0
  local r, perr = c:put("lease/" .. i, "v" .. i, { lease = leases[i] })
  expect(r ~= nil, "client " .. i .. " attaches a key to its lease", perr)
  kas[i] = c:lease_keepalive(leases[i], { require_leader = i > 4 })
  c:watch("key", { prefix = true, require_leader = i > 4 })
end

local stop, n = false, 0
spawn(function()
  while not stop do
    n = n + 1
    writer:put("key" .. (n % 4), "w-" .. n)
    sleep(50 * ms)
  end
end)
run(3 * s)
expect(client(2):stats().pinned_node == 1 and client(6):stats().pinned_node == 1,
       "both pinned_blacklist clients are pinned to node 1",
       { client(2):stats().pinned_node, client(6):stats().pinned_node })

local function alive(i)
  local r = writer:get("lease/" .. i)
  return r ~= nil and r.count == 1
end

local before = {}
for i = 1, 8 do before[i] = client(i):stats() end
isolate(1)
local t0 = now()
-- Poll the stuck lease's key from a healthy client; note what client 2 knew then.
local gone_ms, ended_when_gone = -1, -1
run_until(function()
  if not alive(2) then
    gone_ms = (now() - t0) // ms
    ended_when_gone = client(2):stats().keepalive_ended
    return true
  end
  return false
end, PART - 1 * s, 100 * ms)
run_until(function() return now() - t0 >= PART end, PART)
local after, kept = {}, {}
for i = 1, 8 do
  after[i] = client(i):stats()
  kept[i] = alive(i)
end
heal()

for i = 1, 8 do
  local a, b = after[i], before[i]
  print(a.balancer .. (i > 4 and " +require_leader" or ""), "key kept", kept[i],
        "ka acks", a.keepalive_acks - b.keepalive_acks, "ka ended", a.keepalive_ended,
        "no_leader", a.streams_no_leader, "stream node", a.last_stream_node,
        "watch_max_stall_ms", a.watch_max_stall_ms)
end
print("pinned_blacklist lease key gone after", gone_ms, "ms; client had ended it:",
      ended_when_gone)

local pb, pbr, ha = 2, 6, 4
expect(after[pb].keepalive_acks == before[pb].keepalive_acks and after[pb].streams_no_leader == 0,
       "pinned_blacklist: the keep-alive stuck on node 1 gets no answer and no error",
       { acks = after[pb].keepalive_acks - before[pb].keepalive_acks,
         no_leader = after[pb].streams_no_leader })
expect(gone_ms >= 0 and deleted["lease/2"] ~= nil and deleted["lease/2"] > t0,
       "pinned_blacklist: its lease expires and its key vanishes (a delete event)",
       { gone_ms = gone_ms, delete_event = deleted["lease/2"] and (deleted["lease/2"] - t0) // ms })
expect(after[pb].keepalive_ended == 1 and before[pb].keepalive_last_ack_ms < t0 // ms
       and after[pb].keepalive_ended_ms - after[pb].keepalive_last_ack_ms >= TTL * 1000 - 50,
       "pinned_blacklist: the client held the lease alive a full TTL after its last answer, then gave up on its own deadline",
       { last_ack_ms = after[pb].keepalive_last_ack_ms, ended_ms = after[pb].keepalive_ended_ms,
         partition_ms = t0 // ms, ended_when_key_gone = ended_when_gone })
expect(after[pb].watch_max_stall_ms >= (PART - 3 * s) // ms,
       "pinned_blacklist: its watch stays silent across the partition", after[pb].watch_max_stall_ms)
-- Node 1 ends its require_leader streams (watch, keep-alive) with "no leader" at the
-- same moment; the first close gray-lists node 1 and the balancer moves the other
-- stream at once (before its own close arrives, so it is counted once).
expect(after[pbr].streams_no_leader >= 1
       and after[pbr].stream_reconnects - before[pbr].stream_reconnects >= 2,
       "pinned_blacklist + require_leader: node 1 closes the streams with 'etcdserver: no leader'; both move",
       { no_leader = after[pbr].streams_no_leader,
         reconnects = after[pbr].stream_reconnects - before[pbr].stream_reconnects })
expect(kept[pbr] and after[pbr].keepalive_acks > before[pbr].keepalive_acks
       and after[pbr].last_stream_node ~= 1,
       "pinned_blacklist + require_leader: streams re-established elsewhere, the lease lives",
       { kept = kept[pbr], node = after[pbr].last_stream_node })
expect(after[pbr].watch_max_stall_ms < (PART - 3 * s) // ms,
       "pinned_blacklist + require_leader: the watch catches up during the partition",
       after[pbr].watch_max_stall_ms)
for _, i in ipairs({ 4, 5, 6, 7, 8 }) do
  expect(kept[i] and deleted["lease/" .. i] == nil,
         client(i):stats().balancer .. (i > 4 and " + require_leader" or "") .. ": its lease lives",
         { kept = kept[i] })
end
expect(kept[ha] and after[ha].watch_max_stall_ms < 2000,
       "health_aware: lease kept, watch stall below two election timeouts",
       { kept = kept[ha], watch_max_stall_ms = after[ha].watch_max_stall_ms })

stop = true
run(3 * s)
