-- member_start.lua: member_add{ start = false } puts a voter into the configuration
-- without starting its process, as `etcdctl member add` does before the operator starts
-- the new etcd. A 3-member cluster that adds a fourth voter needs 3 acknowledgements out
-- of 4 from then on: it still commits with its three started members, but once one of
-- them is down only 2 of 4 voters answer and writes stall (etcd's documented reason to
-- start the new member at once, or to add it as a learner). start(n) starts it: with 3
-- of 4 voters up the cluster commits again and the new member catches up. Starting a
-- member that is not awaiting its start is a script error. Must pass.
scenario {
  name = "member-start",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "raft_safety" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(6*s) -- the strict reconfiguration check: every voter connected for 5 s
local l = leader()
local c = client(1)
expect(c:put("k/0", "0") ~= nil, "the 3-member cluster commits")

local n4, err = member_add{ start = false }
expect(n4 ~= nil, "the fourth member is added without being started", err)
if not n4 then return end
local st = status(n4)
expect(st.awaiting_start and not st.alive and st.member_id ~= nil, "it is in the cluster, not running",
       st)
expect(#nodes() == 4, "nodes() lists it", nodes())
run(1*s)
expect(status(n4).awaiting_start and not status(n4).alive, "it does not start by itself", status(n4))
kill(n4)
restart(n4)
run(500*ms)
kill(n4)
heal_all()
run(500*ms)
expect(status(n4).awaiting_start and not status(n4).alive,
       "kill(n) with restart(n) or heal_all() does not start it", status(n4))
expect(c:put("k/1", "1", { node = l }) ~= nil, "three started voters of four are a quorum")

-- one started follower down: 2 of 4 voters answer, below the quorum of 3
local down = nil
for _, n in ipairs(others(l)) do if n ~= n4 and down == nil then down = n end end
kill(down)
local before = status(l).commit
local r, e = c:put("k/2", "2", { node = l, timeout = 3*s })
expect(r == nil, "writes stall: 2 of 4 voters cannot commit", e)
run(2*s)
local commits = 0
for _, n in ipairs(nodes()) do
  if n ~= down and n ~= n4 then commits = math.max(commits, status(n).commit) end
end
expect(commits <= before + 1, "nothing commits during the stall", { before = before, now = commits })

local t0 = now()
start(n4)
expect(not status(n4).awaiting_start, "start(n): no longer awaiting its start", status(n4))
expect(#node_events{ node = n4, kind = "restart", since = t0 } >= 1, "start(n): the member joins",
       node_events{ node = n4, since = t0 })
local ok = run_until(function()
  local nl = leader()
  return nl ~= nil and status(n4).alive and status(n4).applied >= status(nl).commit
end, 15*s)
expect(ok, "with 3 of 4 voters up a leader commits and the new member catches up",
       { leader = leader(), n4 = status(n4) })
local r2, e2 = c:put("k/3", "3", { timeout = 5*s })
expect(r2 ~= nil, "writes commit again", e2)

local ok1, m1 = pcall(start, n4)
expect(not ok1 and tostring(m1):find("not awaiting its start") ~= nil,
       "start(n) of a started member is a script error", m1)
local ok2, m2 = pcall(start, l)
expect(not ok2 and tostring(m2):find("not awaiting its start") ~= nil,
       "start(n) of a founding member is a script error", m2)
restart(down)
run(6*s)
local n5, e5 = member_add{ learner = true, start = false }
expect(n5 ~= nil and status(n5).awaiting_start, "a learner added without being started", e5)
local okr, er = member_remove(n5)
expect(okr, "it is removed before it ever started", er)
local ok3, m3 = pcall(start, n5)
expect(not ok3 and tostring(m3):find("not awaiting its start") ~= nil,
       "start(n) of a removed member is a script error", m3)
