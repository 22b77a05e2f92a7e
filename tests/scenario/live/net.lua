-- net.lua (live target): the network faults between member processes go through the
-- peer proxies. A delay on the leader's peer links slows every write by about that
-- much (its replication must cross them); a clog of the leader's outgoing peer links
-- stops the writes; a one-way cut of the leader's outgoing links makes the others
-- elect a new leader. After each undo, writes are fast again. Then snapshot_save,
-- alarm_disarm and move_leader, as RPCs to the processes.
scenario {
  name = "live-net",
  cluster = { nodes = 3 },
  clients = { count = 1, timeout_ms = 3000 },
  checks  = { "linearizability" },
}

run_until(function() return leader() ~= nil end, 10*s)
local L = leader()
local c = client(1)
local function put_ms(k)
  local t0 = now()
  local r = c:put(k, "v", { timeout = 5*s })
  return r ~= nil, (now() - t0) / ms
end
local ok, base = put_ms("net/0")
expect(ok, "a put on a healthy cluster", base)

net { from = { L }, to = others(L), delay_ms = 300 }
run(100*ms)
local ok1, slow = put_ms("net/1")
expect(ok1 and slow >= 280, "a 300 ms delay on the leader's peer links slows a write", slow)
net { from = { L }, to = others(L), delay_ms = 0 }
run(200*ms)
local ok2, fast = put_ms("net/2")
expect(ok2 and fast < 250, "without the delay a write is fast again", fast)

clog(L, others(L)[1])
clog(L, others(L)[2])
local r3 = c:put("net/3", "v", { timeout = 1*s })
expect(r3 == nil, "a write cannot commit while the leader's outgoing peer links are clogged", r3)
clog(L, others(L)[1], false)
clog(L, others(L)[2], false)
run(500*ms)

partition({ L }, others(L), { oneway = true })
local moved = run_until(function() local n = leader(); return n ~= nil and n ~= L end, 10*s)
expect(moved, "the others elect a new leader when the leader's messages stop reaching them",
       leader())
heal()
run(1*s)
local ok4 = put_ms("net/4")
expect(ok4, "a put after the heal", ok4)

-- the other control calls reach the member processes too
local snap, serr = snapshot_save(leader())
expect(snap ~= nil and snap:size() > 0, "snapshot_save streams a backup from the leader's process",
       serr or (snap and snap:size()))
local dis, derr = alarm_disarm()
expect(dis, "alarm_disarm is answered", derr)
local target = others(leader())[1]
local mok, merr = move_leader(target)
expect(mok, "move_leader is answered", merr)
expect(run_until(function() return leader() == target end, 5*s), "the chosen member leads",
       { leader = leader(), target = target })
