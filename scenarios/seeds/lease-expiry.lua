-- lease-expiry.lua: etcd leases. A lease is granted with a TTL; keys attached to it
-- live as long as it does; keep-alives renew it; once nobody renews it the leader
-- revokes it through Raft and every attached key is deleted at one revision on every
-- member; a revoke deletes the keys at once; only the leader expires leases, and a new
-- leader extends every lease by a full TTL (etcd's lessor promotion), so a lease never
-- expires early because of a failover; a keep-alive stream outlives a leader crash
-- (a follower keeps forwarding it to whoever leads). Asserted on observed data under
-- a workload: the keys read back while the lease lives, the time the delete events
-- arrive (never before the TTL since the grant or since the leader change), one
-- revision for all keys of a lease, reads after the expiry, TTL answers (the time
-- left, asked of every member), revoke; plus all four checkers (the watch events tell
-- the checkers about the deletes no client operation made).
scenario {
  name = "lease-expiry",
  description = "lease keep-alive, expiry through Raft, revoke, extension by a new leader",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 40, keys = 6, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local TTL = 5
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)

-- watch the lease keys; remember when each delete arrives and at which revision
local deleted = {}
c:watch("lease/", { prefix = true, callback = function(ev)
  if ev.type == "delete" then deleted[ev.key] = { at = now(), rev = ev.mod_revision } end
end })

-- 1. keep-alive keeps a lease past its TTL; expiry after the keep-alive stops
local g1 = c:lease_grant(TTL)
expect(g1 ~= nil and g1.id ~= 0 and g1.ttl == TTL, "a lease is granted with the TTL asked for", g1)
local t1 = now()
for i = 1, 3 do c:put("lease/a" .. i, "x", { lease = g1.id }) end
local ka = c:lease_keepalive(g1.id)
run(3 * TTL * s)
local r = c:get("lease/a", { prefix = true })
expect(r and r.count == 3, "keys of a lease kept alive survive three TTLs", r and r.count)
c:lease_keepalive_stop(ka)
local stopped = now()
run_until(function() return deleted["lease/a3"] ~= nil end, 4 * TTL * s)
local d1, d2, d3 = deleted["lease/a1"], deleted["lease/a2"], deleted["lease/a3"]
expect(d1 and d2 and d3, "the keys are deleted once the keep-alive stops", deleted)
-- the keep-alive renews every TTL/3, so the last renewal was at most TTL/3 before the stop
expect(d1 and d3 and d1.at - stopped >= TTL * s * 2 // 3, "not before the TTL since the last keep-alive",
       d1 and (d1.at - stopped) // ms)
expect(d1 and d3 and d1.at - stopped <= (TTL + 3) * s, "expiry follows the TTL closely",
       d1 and (d1.at - stopped) // ms)
expect(d1 and d2 and d3 and d1.rev == d2.rev and d2.rev == d3.rev,
       "all keys of one lease go at one revision", { d1 and d1.rev, d2 and d2.rev, d3 and d3.rev })
local gone = 0
for i = 1, 3 do
  local g = client(i):get("lease/a", { prefix = true })
  if g and g.count == 0 then gone = gone + 1 end
end
expect(gone == 3, "the expired lease's keys are gone for every reader", gone)
local tt = c:lease_ttl(g1.id)
expect(tt and tt.ttl == -1, "the expired lease answers TTL -1", tt and tt.ttl)

-- 2. revoke deletes the keys at once
local g2 = c:lease_grant(60)
c:put("lease/b1", "y", { lease = g2.id })
c:put("lease/b2", "y", { lease = g2.id })
local rv, rverr = c:lease_revoke(g2.id)
expect(rv ~= nil, "revoke succeeds", rverr)
local revoked = now()
run_until(function() return deleted["lease/b2"] ~= nil end, 2*s)
local b1, b2 = deleted["lease/b1"], deleted["lease/b2"]
expect(b1 and b2 and b1.rev == b2.rev and b1.at - revoked < 1 * s,
       "a revoked lease's keys are deleted at once, at one revision", { b1, b2 })
local p, perr = c:put("lease/b3", "z", { lease = g2.id })
expect(p == nil and perr == "etcdserver: requested lease not found", "a put on a revoked lease is refused", perr)

-- 3. a leader change extends every lease by a full TTL (a transfer: a killed leader
-- leaves writes of unknown outcome that the checkers may place at the revision of the
-- expiry's delete, which no client operation made)
local g3 = c:lease_grant(TTL)
local t3 = now()
c:put("lease/c1", "z", { lease = g3.id })
run(2 * s)
-- every member answers the time left (a follower asks the leader, as etcd)
local left = {}
for i = 1, 3 do
  local q = client(i):lease_ttl(g3.id)
  left[#left + 1] = q and q.ttl or "error"
end
local ok_left = true
for _, v in ipairs(left) do ok_left = ok_left and v ~= "error" and v >= TTL - 3 and v <= TTL - 1 end
expect(ok_left, "two seconds after the grant every member reports 2 to 4 seconds left", left)
local l = leader()
local moved, merr = move_leader(others(l)[1])
expect(moved, "leadership moves to another member", merr)
local promoted = now()
run_until(function() return deleted["lease/c1"] ~= nil end, 6 * TTL * s)
local d = deleted["lease/c1"]
expect(d ~= nil, "the lease expires under the new leader", d)
expect(d and d.at - t3 >= TTL * s, "not before its TTL since the grant", d and (d.at - t3) // ms)
expect(d and d.at - promoted >= (TTL - 1) * s, "the new leader gave it a full TTL again",
       d and (d.at - promoted) // ms)

-- 4. the keep-alive stream outlives a leader crash: the follower forwarding it (or the
-- client, reconnecting) reaches the new leader before the TTL runs out.
local g4 = c:lease_grant(TTL)
for i = 1, 2 do c:put("lease/d" .. i, "k", { lease = g4.id }) end
local ka4 = c:lease_keepalive(g4.id)
run(TTL * s)
local dead = leader()
kill(dead)
run(2 * TTL * s)
restart(dead)
run(TTL * s)
r = c:get("lease/d", { prefix = true })
expect(r and r.count == 2 and deleted["lease/d1"] == nil,
       "keys of a lease kept alive survive a leader crash", r and r.count)
tt = c:lease_ttl(g4.id)
expect(tt and tt.ttl > 0 and tt.ttl <= TTL, "the kept-alive lease still has time left", tt and tt.ttl)
heal_all()
run(2*s)
