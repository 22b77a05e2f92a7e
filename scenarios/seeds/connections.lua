-- connections: how many connections each balancer policy holds to a 5-member
-- cluster, and what happens to the old one when a pinned client switches.
-- clientv3 on grpc 1.7 (pinned_blacklist) holds a single connection to its pinned
-- member; clientv3 on grpc 1.23 / etcd 3.4+ (round_robin) holds one per endpoint,
-- 5; grpc 1.0 (pinned_random) connects to every endpoint too and health_aware keeps
-- round_robin's connections. The member pinned_blacklist is pinned to is then cut
-- off from its peers (it stays reachable): a request there times out, the member is
-- gray-listed, the client switches and closes the old connection although the
-- member is still up.
-- Asserted on each client's observed connection counters: held connections per
-- policy (1 for grpc1.7; 5 for grpc1.23, grpc1.0, health_aware) before and after
-- the switch; pinned_blacklist never holds more than its one connection once pinned,
-- opens exactly one new connection for the switch and closes the old one.
scenario {
  name = "connections",
  description = "connections held per policy on 5 members (1 for grpc1.7, 5 for grpc1.23); old connection closed after a switch",
  cluster = { nodes = 5, election_ms = 1000, heartbeat_ms = 100 },
  clients = { balancers = { "pinned_random", "pinned_blacklist", "round_robin", "health_aware" },
              timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, watchers = 4 },
  checks = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
run(3 * s)

local want = { 5, 1, 5, 5 }
local before = {}
for i = 1, 4 do
  before[i] = client(i):stats()
  print(before[i].balancer, "held", before[i].connections_held, "opened",
        before[i].connections_opened, "closed", before[i].connections_closed)
  expect(before[i].connections_held == want[i],
         before[i].balancer .. ": holds " .. want[i] .. " connection(s) to 5 members",
         before[i].connections_held)
end

local bl = client(2)
local target = bl:stats().pinned_node
expect(target ~= 0, "pinned_blacklist has pinned a member", target)
local max_held = bl:stats().connections_held
spawn(function()
  while true do
    max_held = math.max(max_held, bl:stats().connections_held)
    sleep(10 * ms)
  end
end)
isolate(target)
expect(run_until(function()
  local p = bl:stats().pinned_node
  return p ~= 0 and p ~= target
end, 8 * s), "pinned_blacklist switches away from the cut-off member", bl:stats().pinned_node)
run(2 * s)

local after = {}
for i = 1, 4 do
  after[i] = client(i):stats()
  print(after[i].balancer, "held", after[i].connections_held, "opened",
        after[i].connections_opened, "closed", after[i].connections_closed, "switches",
        after[i].switches)
  expect(after[i].connections_held == want[i],
         after[i].balancer .. ": still holds " .. want[i] .. " connection(s) after the switch",
         after[i].connections_held)
end
expect(max_held == 1, "pinned_blacklist: never more than one connection while switching", max_held)
expect(after[2].connections_opened - before[2].connections_opened == 1
       and after[2].connections_closed - before[2].connections_closed == 1,
       "pinned_blacklist: one new connection; the old one closed though its member is up",
       { opened = after[2].connections_opened - before[2].connections_opened,
         closed = after[2].connections_closed - before[2].connections_closed })
expect(after[3].connections_closed == before[3].connections_closed,
       "round_robin: keeps its connection to the cut-off member (no health list)",
       after[3].connections_closed - before[3].connections_closed)
heal()
run(3 * s)
