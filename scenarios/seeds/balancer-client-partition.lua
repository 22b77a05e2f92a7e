-- balancer-client-partition: a client-side network failure — a client cut from one
-- member while the members stay up and connected to each other — shown once per
-- client generation (the client design document's "client-side network failure").
-- Four clients, one per policy, read with serializable gets (any member answers).
--
-- Phase 1: clients 1 (pinned_random, grpc 1.0), 3 (round_robin, grpc 1.23) and
-- 4 (health_aware) are cut from the member pinned_random is pinned to, P, for 8 s.
--   * pinned_random stalls for the whole cut: no pings, and a call that times out does
--     not move it, so every attempt goes to P and times out; it never switches, its
--     watch on P hears nothing until the cut heals, then hears every missed write;
--   * health_aware moves at once: it sees the call on P outstanding too long and P's
--     probes unanswered, and reads on the other members (no gap of 500 ms);
--   * round_robin keeps reading through the other members during the cut.
-- Phase 2: pinned_blacklist (grpc 1.7, client 2) is cut from its pinned member A; a
-- read times out, A goes on the unhealthy list for the fixed wait (the dial timeout,
-- 5 s) and the client pins another member X. The cut from A heals at once; then the
-- client is cut from both other members. A is reachable all along, but the client does
-- not use it before its 5 s are over: its first read answered by A comes 5 s after A
-- was listed (plus a round trip), not sooner. Before client-side faults the wait could
-- only be shown by killing and pausing the other members (balancer-blacklist-5s),
-- where it hides behind the paused member's keepalive timeout (A answers 10.5 s after it
-- was listed).
-- Asserted with client:stats().endpoints (unhealthy_until_ms, pinned) and
-- client:attempts() (member and outcome of each attempt).
scenario {
  name = "balancer-client-partition",
  description = "a client cut from one member: grpc1.0 stalls, health_aware moves at once, grpc1.7 waits its fixed 5 s",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 10000 },
  checks = { "linearizability", "watch", "raft_safety", "converge" },
}

local CUT = 8 * s
local names = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" }

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
for i = 1, 4 do client(i):put("k" .. i, "v" .. i) end

-- Every client reads in a loop; each success is kept as {at, node}.
local ok = { {}, {}, {}, {} }
local stop = false
local function loop(i, timeout)
  local c = client(i)
  while not stop do
    local r = c:get("k" .. i, { serializable = true, timeout = timeout })
    if r then ok[i][#ok[i] + 1] = { at = now(), node = r.node } end
    sleep(20 * ms)
  end
end
spawn(loop, 1, 2 * s)
spawn(loop, 2, 1 * s)
spawn(loop, 3, 2 * s)
spawn(loop, 4, 2 * s)
run(3 * s)

-- Successes of client i in [from, to), and the longest gap between two of them there.
local function successes(i, from, to)
  local n, gap, last = 0, 0, from
  for _, e in ipairs(ok[i]) do
    if e.at >= from and e.at < to then
      n = n + 1
      gap = math.max(gap, e.at - last)
      last = e.at
    end
  end
  return n, math.max(gap, to - last)
end

local function endpoint(c, member)
  for _, e in ipairs(c:stats().endpoints) do
    if e.member == member then return e end
  end
end

-- --- phase 1 ------------------------------------------------------------------------
local pr = client(1)
local P = pr:stats().pinned_node
expect(P ~= 0, "pinned_random has pinned a member", P)
local heard = {}
pr:watch("cut/", { prefix = true, callback = function(ev) heard[#heard + 1] = now() end })
run(500 * ms)
local pr_before = pr:stats()
partition({ client(1), client(3), client(4) }, { P })
local t0 = now()
-- writes pinned_random's watch should hear, made by a client the cut leaves alone
spawn(function()
  for n = 1, 10 do
    client(2):put("cut/" .. n, "v" .. n, { timeout = 2 * s })
    sleep(500 * ms)
  end
end)
run(CUT)
local pr_after = pr:stats()
local t_heal = now()
-- pinned_random's attempts sent during the cut that are over (the last one is still
-- outstanding: its request waits at the partition)
local pr_attempts, pr_elsewhere, pr_timeouts = 0, 0, 0
for _, a in ipairs(pr:attempts()) do
  if a.at >= t0 and a["end"] then
    pr_attempts = pr_attempts + 1
    if a.member ~= P then pr_elsewhere = pr_elsewhere + 1 end
    if a.outcome == "timeout" then pr_timeouts = pr_timeouts + 1 end
  end
end
heal()
run(4 * s)

-- answers already on the wire at the cut still arrive within the network latency
local settle = 100 * ms
local pr_ok = successes(1, t0 + settle, t_heal)
local heard_cut, heard_after = 0, 0
for _, at in ipairs(heard) do
  if at >= t0 + settle and at < t_heal then heard_cut = heard_cut + 1 end
  if at >= t_heal then heard_after = heard_after + 1 end
end
print("phase 1: P", P, "pinned_random attempts", pr_attempts, "timeouts", pr_timeouts,
      "successes", pr_ok, "watch heard during/after", heard_cut, heard_after)
expect(pr_ok == 0 and pr_after.pinned_node == P and pr_after.switches == pr_before.switches,
       "pinned_random: stalls for the whole client-side partition, pinned to the cut member",
       { ok = pr_ok, pinned_node = pr_after.pinned_node,
         switches = pr_after.switches - pr_before.switches })
expect(pr_attempts >= 2 and pr_elsewhere == 0 and pr_timeouts == pr_attempts,
       "pinned_random: every attempt during the cut goes to the cut member and times out",
       { attempts = pr_attempts, elsewhere = pr_elsewhere, timeouts = pr_timeouts })
expect(pr_after.pings == 0, "pinned_random: sends no keepalive pings", pr_after.pings)
expect(heard_cut == 0 and heard_after >= 10,
       "pinned_random: its watch on the cut member is silent, then hears the missed writes",
       { during = heard_cut, after = heard_after })
expect(successes(1, t_heal, t_heal + 4 * s) > 0, "pinned_random: reads again once the cut heals")
local ha_n, ha_gap = successes(4, t0, t_heal)
print("phase 1: health_aware successes", ha_n, "longest gap ms", ha_gap // ms)
expect(ha_n > 0 and ha_gap < 500 * ms,
       "health_aware: leaves the cut member at once (no gap of 500 ms without a read)",
       { successes = ha_n, gap_ms = ha_gap // ms })
local ha_on_p = 0
for _, e in ipairs(ok[4]) do
  if e.at >= t0 + 1 * s and e.at < t_heal and e.node == P then ha_on_p = ha_on_p + 1 end
end
expect(ha_on_p == 0, "health_aware: no read is answered by the cut member", ha_on_p)
local rr_n = successes(3, t0 + 2 * s, t_heal)
expect(rr_n > 0, "round_robin: reads through the other members during the cut", rr_n)

-- --- phase 2 ------------------------------------------------------------------------
local bl = client(2)
local A = bl:stats().pinned_node
expect(A ~= 0, "pinned_blacklist has pinned a member", A)
partition({ client(2) }, { A })
local t_cut = now()
expect(run_until(function()
  local p = bl:stats().pinned_node
  return p ~= 0 and p ~= A
end, 5 * s, 5 * ms), "pinned_blacklist: moves off the cut member")
local X = bl:stats().pinned_node
local listed = endpoint(bl, A).unhealthy_until_ms
local t_mark = listed * ms - 5 * s -- when A went on the unhealthy list
heal()
local t_back = now() -- A is reachable again from here on
partition({ client(2) }, others(A))
run_until(function() return now() >= t_mark + 8 * s end, 10 * s)
stop = true
heal_all()
run(2 * s)

local first_a = nil
for _, e in ipairs(ok[2]) do
  if e.at > t_back and e.node == A and not first_a then first_a = e.at end
end
local tried_a = 0 -- attempts sent to A while it was reachable but on the list
for _, a in ipairs(bl:attempts()) do
  if a.at >= t_back and a.at < t_mark + 5 * s and a.member == A then tried_a = tried_a + 1 end
end
print("phase 2: A", A, "X", X, "listed after the cut (ms)", (t_mark - t_cut) // ms,
      "reachable again after listing (ms)", (t_back - t_mark) // ms,
      "first read by A after listing (ms)", first_a and (first_a - t_mark) // ms)
expect(listed * ms - t_mark == 5 * s and t_back - t_mark < 1 * s,
       "pinned_blacklist: the cut member is listed unhealthy for 5 s and reachable again within 1 s",
       { listed_ms = listed, back_ms = (t_back - t_mark) // ms })
expect(tried_a == 0, "pinned_blacklist: sends nothing to the listed member during its wait",
       tried_a)
expect(first_a ~= nil and first_a - t_mark >= 5 * s and first_a - t_mark < 5600 * ms,
       "pinned_blacklist: uses the member again once its fixed 5 s wait is over, not before",
       first_a and (first_a - t_mark) // ms)
for i = 3, 4 do
  local n = successes(i, t_back, t_mark + 5 * s)
  expect(n > 0, names[i] .. ": reads meanwhile (the members stay up and connected)", n)
end
