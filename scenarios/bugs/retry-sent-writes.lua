-- retry-sent-writes: the bug switch client.retry_sent_writes makes the client send a
-- mutating call again after a per-attempt timeout, although the first copy already
-- left the client (clientv3 retries a write only when it surely never left:
-- "there is no address available" / "there is no connection available").
-- Replication is made slow (400 ms on every link), so a write takes longer than a
-- third of its 3 s timeout: with the bug the same write is sent again to another
-- member and may apply twice. Every value the workload writes is unique, so a value
-- applied twice is a write that happened twice: the linearizability checker must
-- fail the run. Without the bug every write applies at most once and the run
-- passes. All four policies run side by side (the duplicates do not depend on the
-- policy).
-- Asserted: linearizability (fails with the bug); keys that each client writes
-- exactly once all end at version 1 (with the bug some reach 2: the same
-- observation without the checker); every client made progress. (No watch here:
-- the linearizability checker takes a revision it cannot explain from watch events,
-- which hides a duplicate from it.)
scenario {
  name = "retry-sent-writes",
  description = "client.retry_sent_writes: a sent write retried after a timeout applies twice",
  cluster = { nodes = 3 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 3000 },
  workload = { rate = 40, keys = 4, mix = { put = 6, get = 2, delete = 0, txn = 0, range = 1 } },
  checks = { "linearizability", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
-- Besides the workload, each client puts keys of its own, each key exactly once: a
-- key whose version ends above 1 was written twice.
local stop = false
local function writer(i)
  local c, n = client(i), 0
  while not stop do
    n = n + 1
    c:put("dup/" .. i .. "/" .. n, "d" .. i .. "-" .. n)
    sleep(200 * ms)
  end
end
for i = 1, 4 do spawn(writer, i) end
run(2 * s)
net { delay_ms = 400 }
run(15 * s)
heal_all()
stop = true
run(6 * s)
local all = client(4):get("dup/", { prefix = true })
local twice = {}
for _, kv in ipairs(all and all.kvs or {}) do
  if kv.version > 1 then twice[#twice + 1] = kv.key end
end
expect(all ~= nil and #all.kvs > 0 and #twice == 0, "no key written once has a version above 1",
       twice)
for i = 1, 4 do
  local st = client(i):stats()
  expect(st.ok > 0, st.balancer .. ": makes progress", st.ok)
end
