-- faults_client.lua: every network fault applied to a client takes effect on that
-- client's links only, and is undone by its undo (heal, unclog, release, net{} with
-- zeros, heal_all). Calls pinned with `node = n` probe one client-member link at a
-- time. faults_check.py compares the `faults` rows this run writes.
scenario {
  name = "cnet-faults",
  cluster = { nodes = 3 },
  clients = { count = 2, balancer = "round_robin", timeout_ms = 1000 },
}
expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader is elected")
local c1, c2 = client(1), client(2)
c1:put("k", "v")
run(500 * ms)
local L0 = leader()

-- Does client c read through member n within t (default 300 ms)? And how long did it take?
local function reads(c, n, t)
  local t0 = now()
  local r = c:get("k", { node = n, serializable = true, timeout = t or 300 * ms })
  return r ~= nil, now() - t0
end
-- The members client c reads through, as a string "1,3" (each probed once).
local function through(c)
  local got = {}
  for _, n in ipairs(nodes()) do
    if reads(c, n) then got[#got + 1] = tostring(n) end
  end
  return table.concat(got, ",")
end
local function settle() run(100 * ms) end

expect(through(c1) == "1,2,3" and through(c2) == "1,2,3", "every link works at the start")

-- partition, two-way, a client against one member
partition({ client(1) }, { 2 })
expect(through(c1) == "1,3", "partition({client(1)}, {2}): client 1 no longer reads through 2",
       through(c1))
expect(through(c2) == "1,2,3", "... client 2 is not touched", through(c2))
expect(c2:put("k", "v2") ~= nil and leader() == L0, "... nor the members' links", leader())
heal()
settle()
expect(through(c1) == "1,2,3", "heal: client 1 reads through 2 again", through(c1))

-- partition without a second side: the client against every member
partition({ client(1) })
expect(through(c1) == "", "partition({client(1)}): client 1 is cut from every member",
       through(c1))
heal()
settle()
expect(through(c1) == "1,2,3", "heal: every link is back", through(c1))

-- one-way cuts tell the directions apart: a write whose answer is cut is applied
partition({ 2 }, { client(1) }, { oneway = true })
local r, err = c1:put("ow", "back", { node = 2, timeout = 500 * ms })
expect(r == nil, "member 2 -> client 1 cut: the answer never comes", err)
local g = c2:get("ow")
expect(g and g.value == "back", "... but the write reached member 2 and was applied",
       g and g.value)
heal()
settle()
partition({ client(1) }, { 3 }, { oneway = true })
r, err = c1:put("ow", "fwd", { node = 3, timeout = 500 * ms })
g = c2:get("ow")
expect(r == nil and g and g.value == "back",
       "client 1 -> member 3 cut: the request does not arrive", { err = err, value = g and g.value })
heal()
settle()

-- a bridge: the client sits between two halves of the members
partition({ 1 }, { 2, 3 })
expect(through(c1) == "1,2,3", "partition({1}, {2, 3}): client 1, named on no side, reaches both",
       through(c1))
heal()
settle()
partition({ client(1), 1 }, { 2, 3 })
expect(through(c1) == "1", "partition({client(1), 1}, {2, 3}): client 1 reaches only member 1",
       through(c1))
heal()
settle()
expect(run_until(function() return leader() ~= nil end, 10 * s), "a leader again after the bridge")

-- isolate a client
isolate(client(2))
expect(through(c2) == "" and through(c1) == "1,2,3",
       "isolate(client(2)): client 2 is cut from every member, client 1 is not",
       { c2 = through(c2), c1 = through(c1) })
heal()
settle()
expect(through(c2) == "1,2,3", "heal: client 2 is back", through(c2))

-- clog, one direction, undone by unclog and by heal
clog(client(1), 2)
expect(through(c1) == "1,3", "clog(client(1), 2)", through(c1))
clog(client(1), 2, false)
settle()
expect(through(c1) == "1,2,3", "clog(client(1), 2, false) unclogs", through(c1))
clog(nil, client(1))
expect(through(c1) == "", "clog(nil, client(1)): every endpoint -> client 1", through(c1))
heal()
settle()
expect(through(c1) == "1,2,3", "heal unclogs", through(c1))

-- hold and release, both directions; heal leaves holds alone
hold(client(1), 2)
expect(through(c1) == "1,3", "hold(client(1), 2)", through(c1))
release(client(1), 2)
settle()
expect(through(c1) == "1,2,3", "release(client(1), 2)", through(c1))
hold(3, client(1))
expect(through(c1) == "1,2", "hold(3, client(1)): the answers wait", through(c1))
release(3, client(1))
settle()
hold(client(1))
expect(through(c1) == "", "hold(client(1)): client 1 -> every endpoint", through(c1))
heal()
expect(through(c1) == "", "heal does not release a hold", through(c1))
release(client(1))
settle()
expect(through(c1) == "1,2,3", "release(client(1))", through(c1))

-- net: loss breaks the connection, delay slows one client's links only
local before = c1:stats().connections_opened
net { drop = 1, from = client(1), to = 2 }
expect(through(c1) == "1,3", "net{drop = 1, from = client(1), to = 2}", through(c1))
local broken = 0
for _, a in ipairs(c1:attempts(10)) do
  if a.member == 2 and a.outcome == "transport" then broken = broken + 1 end
end
expect(broken > 0, "... a lost frame breaks client 1's connection to member 2", broken)
net { from = client(1), to = 2 }
expect(run_until(function() return reads(c1, 2) end, 5 * s),
       "net{from = client(1), to = 2} with no loss: client 1 reconnects to member 2")
expect(c1:stats().connections_opened > before, "... on a new connection",
       c1:stats().connections_opened - before)
net { delay_ms = 200, from = client(1) }
local ok1, d1 = reads(c1, 1, 2 * s)
local ok2, d2 = reads(c2, 1, 2 * s)
expect(ok1 and d1 >= 400 * ms and ok2 and d2 < 50 * ms,
       "net{delay_ms = 200, from = client(1)}: both directions of client 1's links only",
       { c1_ms = d1 // ms, c2_ms = d2 // ms })
net { from = client(1), to = 1, oneway = true }
ok1, d1 = reads(c1, 1, 2 * s)
local ok3, d3 = reads(c1, 2, 2 * s)
expect(ok1 and d1 >= 200 * ms and d1 < 400 * ms and ok3 and d3 >= 400 * ms,
       "oneway: client 1 -> member 1 back to the base, member 1 -> client 1 and the others keep 200 ms",
       { to1_ms = d1 // ms, to2_ms = d3 // ms })
net { from = client(1) }
ok1, d1 = reads(c1, 1, 2 * s)
expect(ok1 and d1 < 50 * ms, "net{from = client(1)}: client 1's links back to the base", d1 // ms)
net { dup = 1, from = client(1) }
expect(through(c1) == "1,2,3", "net{dup = 1}: connections are never duplicated", through(c1))
net { from = client(1) }

-- heal_all undoes every kind at once
net { delay_ms = 300, from = client(2) }
hold(client(2), 1)
clog(client(2), 2)
partition({ client(2) }, { 3 })
expect(through(c2) == "", "client 2 cut four ways", through(c2))
heal_all()
settle()
local ok4, d4 = reads(c2, 1, 2 * s)
expect(through(c2) == "1,2,3" and ok4 and d4 < 50 * ms, "heal_all: client 2 is back at base speed",
       { through = through(c2), ms = d4 // ms })
