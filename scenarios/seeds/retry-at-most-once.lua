-- retry-at-most-once: clientv3's retry interceptor retries a read-only call on code
-- Unavailable (e.g. `etcdserver: no leader`), but a mutating call only when it
-- surely never left the client; a write that timed out after being sent is returned
-- to the caller (unknown outcome), never sent again, so it applies at most once.
-- Four clients, one per policy, write unique keys (each key written once, with a
-- unique value) and read with require_leader, with a 2 s timeout. Both pinned
-- policies are pinned to node 1 (the other members are down while the clients
-- connect); node 1 is then cut off from its peers for 8 s while still reachable,
-- so writes sent there time out and reads there get `etcdserver: no leader` once
-- it has lost its leader.
-- Asserted on observed data: some writes timed out (unknown) and none was sent
-- again (the client's writes_resent counter); after the heal every key the clients
-- wrote has version 1 at most (no write applied twice; the linearizability checker
-- judges the same history); reads got `no leader` and were retried elsewhere
-- (read_retries > 0) and succeeded.
scenario {
  name = "retry-at-most-once",
  description = "sent writes that time out are never retried (at most once); reads are retried on Unavailable",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 2000 },
  checks = { "linearizability", "watch", "raft_safety", "converge" },
}

kill(2)
kill(3)
run(300 * ms)
restart(2)
restart(3)
expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
if leader() == 1 then for _ = 1, 25 do if move_leader(2) then break end run(200 * ms) end end -- (on etcd node 2 may still be starting)
expect(run_until(function() local l = leader(); return l ~= nil and l ~= 1 end, 10 * s),
       "node 1 is a follower", leader())

local unknown_writes, reads_ok, reads_failed, no_leader = 0, 0, 0, 0
local stop = false
local function loop(i)
  local c, n = client(i), 0
  while not stop do
    n = n + 1
    local r, err, status = c:put("amo/" .. i .. "/" .. n, "c" .. i .. "-" .. n)
    if not r and status == "unknown" then unknown_writes = unknown_writes + 1 end
    local g, gerr = c:get("amo/" .. i .. "/" .. n, { require_leader = true })
    if g then reads_ok = reads_ok + 1 else reads_failed = reads_failed + 1 end
    if gerr == "etcdserver: no leader" then no_leader = no_leader + 1 end
    sleep(30 * ms)
  end
end
for i = 1, 4 do spawn(loop, i) end
run(2 * s)
local before = {}
for i = 1, 4 do before[i] = client(i):stats() end
isolate(1)
run(8 * s)
heal()
run(2 * s)
stop = true
run(3 * s)

local resent, read_retries = 0, 0
for i = 1, 4 do
  local a = client(i):stats()
  print(a.balancer, "unknown", a.unknown - before[i].unknown, "read_retries",
        a.read_retries - before[i].read_retries, "writes_resent", a.writes_resent)
  resent = resent + a.writes_resent
  read_retries = read_retries + a.read_retries - before[i].read_retries
end
local all = client(4):get("amo/", { prefix = true })
local twice, keys = 0, 0
for _, kv in ipairs(all and all.kvs or {}) do
  keys = keys + 1
  if kv.version > 1 then twice = twice + 1 end
end
print("unknown writes", unknown_writes, "keys", keys, "applied twice", twice, "reads ok", reads_ok,
      "failed", reads_failed, "no leader seen by the caller", no_leader)
expect(unknown_writes >= 1, "some sent writes timed out (unknown outcome)", unknown_writes)
expect(resent == 0, "no write is sent again after it left the client", resent)
expect(all ~= nil and keys > 100 and twice == 0, "no write applied twice",
       { keys = keys, twice = twice })
expect(read_retries >= 1, "reads answered 'no leader' are retried on another member", read_retries)
expect(reads_failed <= unknown_writes + 4, "reads succeed through their retries",
       { ok = reads_ok, failed = reads_failed })
