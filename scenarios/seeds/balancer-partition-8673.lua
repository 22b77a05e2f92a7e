-- balancer-partition-8673: etcd#8673. A follower is cut off from its peers while
-- clients still reach it and it still answers keepalive pings, so keepalive cannot
-- see the fault. Five clients run side by side on the same fault: pinned_random,
-- pinned_blacklist, round_robin and health_aware each run a loop of puts and gets
-- (2 s per-call timeout) and a watch; a fifth, pinned_blacklist, only watches.
-- At the start every member but node 1 is down for a moment, so both pinned
-- policies pin node 1 (grpc 1.0 and 1.7 pin the first endpoint that answers); node 1
-- is then made a follower and isolated for 10 s.
-- Asserted on the observed per-client figures of the partition window:
--   * pinned_random (grpc 1.0: no keepalive, a timeout does not move it) stalls for
--     the whole partition: no success, no switch, a stall of nearly the partition;
--   * pinned_blacklist's unary calls time out before its error handler moves on
--     (a stall of at least the request timeout, at least one call lost);
--   * the watch-only pinned_blacklist client receives nothing while the majority
--     keeps writing: its watch stall spans the partition;
--   * round_robin loses the requests it sends to the cut-off member;
--   * health_aware keeps availability >= 0.99, its watch stall below two election
--     timeouts, and sends (almost) no retries to the cut-off member;
--   * every client succeeds again after the heal; the history stays linearizable.
scenario {
  name = "balancer-partition-8673",
  description = "etcd#8673: a member cut off from its peers but answering pings; per-policy availability and watch stall",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = {
    balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware",
                  "pinned_blacklist" },
    timeout_ms = 2000,
  },
  checks = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

local TIMEOUT = 2 * s
local PART = 10 * s
local names = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware",
                "pinned_blacklist (watch only)" }

-- Both pinned policies pin the first member that answers: make it node 1.
kill(2)
kill(3)
run(300 * ms)
restart(2)
restart(3)
expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
local target = 1
if leader() == target then
  for _ = 1, 25 do if move_leader(2) then break end run(200 * ms) end -- (on etcd node 2 may still be starting)
end
expect(run_until(function() local l = leader(); return l ~= nil and l ~= target end, 10 * s),
       "node 1 is a follower", leader())

local stop = false
local function loop(i)
  local c, n = client(i), 0
  while not stop do
    n = n + 1
    local k = "key" .. (n % 8)
    if n % 2 == 0 then
      c:put(k, "c" .. i .. "-" .. n, { timeout = TIMEOUT })
    else
      c:get(k, { timeout = TIMEOUT })
    end
    sleep(20 * ms)
  end
end
for i = 1, 5 do
  client(i):watch("key", { prefix = true })
end
for i = 1, 4 do
  spawn(loop, i)
end
run(3 * s)

expect(client(2):stats().pinned_node == target and client(5):stats().pinned_node == target,
       "both pinned_blacklist clients are pinned to node 1",
       { client(2):stats().pinned_node, client(5):stats().pinned_node })

local before = {}
for i = 1, 5 do before[i] = client(i):stats() end
isolate(target)
-- pinned_random's successes from 200 ms on (an answer already on its way at the cut
-- still arrives).
local pr_ok0
spawn(function() sleep(200 * ms); pr_ok0 = client(1):stats().ok end)
run(PART)
local after = {}
for i = 1, 5 do after[i] = client(i):stats() end
heal()

local function window(i)
  local a, b = after[i], before[i]
  local ok = a.ok - b.ok
  local lost = (a.fail - b.fail) + (a.unknown - b.unknown)
  return { ok = ok, lost = lost, availability = ok / math.max(1, ok + lost),
           max_stall_ms = a.max_stall_ms, watch_max_stall_ms = a.watch_max_stall_ms,
           retries_to_bad = a.retries_to_bad - b.retries_to_bad, switches = a.switches - b.switches,
           connections_opened = a.connections_opened }
end
local w = {}
for i = 1, 5 do
  w[i] = window(i)
  print(names[i], "ok", w[i].ok, "lost", w[i].lost, "availability", w[i].availability,
        "max_stall_ms", w[i].max_stall_ms, "watch_max_stall_ms", w[i].watch_max_stall_ms,
        "retries_to_bad", w[i].retries_to_bad)
end

local pr, pb, rr, ha, pbw = w[1], w[2], w[3], w[4], w[5]
expect(after[1].ok == pr_ok0 and pr.switches == 0 and pr.max_stall_ms >= (PART - TIMEOUT) // ms,
       "pinned_random: stuck on the cut-off member for the whole partition", pr)
expect(pb.lost >= 1 and pb.max_stall_ms >= 1900,
       "pinned_blacklist: a unary call times out before the balancer moves on", pb)
-- (the majority's first commit may wait for a client's timeout: the floor allows it)
expect(pbw.watch_max_stall_ms >= (PART - 2 * TIMEOUT) // ms,
       "pinned_blacklist: a watch pinned to the cut-off member hears nothing across the partition",
       pbw)
expect(rr.lost >= 2 and rr.availability < 0.99,
       "round_robin: requests sent to the cut-off member are lost", rr)
expect(ha.availability >= 0.99, "health_aware: availability >= 0.99 during the partition", ha)
expect(ha.watch_max_stall_ms < 2000,
       "health_aware: watch stall below two election timeouts", ha)
expect(ha.retries_to_bad <= 2, "health_aware: no retries against the cut-off member", ha)

run(4 * s)
stop = true
run(2 * s)
for i = 1, 4 do
  expect(client(i):stats().ok > after[i].ok, names[i] .. ": succeeds again after the heal",
         client(i):stats().ok - after[i].ok)
end
