-- smoke.lua (etcd target): the live smoke of issue 16 against a real etcd 3.4 cluster.
-- Three members, four clients (one per balancer policy) under a mixed workload with
-- two watchers, our own watch with prev_kv, a lease, a compaction and a defrag; the
-- leader is partitioned away from the others (its peer links cut through the
-- proxies), a new leader must appear, then a follower is killed and restarted on its
-- data directory. Linearizability and the watch guarantees must hold.
scenario {
  name = "etcd-smoke",
  description = "etcd target: partition, kill/restart, 4 balancers, watches",
  cluster  = { nodes = 3 },
  clients  = { balancers = { "round_robin", "pinned_random", "pinned_blacklist",
                             "health_aware" }, timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, mix = { put = 5, get = 4, delete = 1, txn = 1, range = 1 },
               watchers = 2 },
  checks   = { "linearizability", "watch", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local old = leader()
expect(old ~= nil, "a leader is known at start", old)
expect(status(old).version:match("^3%.") ~= nil, "status() is etcd's own", status(old).version)

local c = client(1)
-- the watch starts at the next revision: on etcd its creation reaches the member after
-- the put may have (the gateway streams it on a connection of its own)
local r0 = c:get("smoke/a", { timeout = 5*s })
expect(r0 ~= nil, "a read on a healthy cluster", r0)
local w = c:watch("smoke/", { prefix = true, prev_kv = true, start_rev = r0.revision + 1 })
local r, err = c:put("smoke/a", "1")
expect(r ~= nil and r.revision > 1, "a put succeeds on a healthy cluster", err)
local l = c:lease_grant(30)
expect(l ~= nil and l.id ~= 0, "a lease is granted", l and l.id)
c:put("smoke/b", "x", { lease = l.id })
local ev = w:next(2*s)
expect(ev ~= nil and ev.key == "smoke/a" and ev.value == "1", "the watch sees the put",
       ev and ev.key)

run(1*s)
partition({ old }, others(old))
local moved = run_until(function() local n = leader(); return n ~= nil and n ~= old end, 10*s)
expect(moved, "a new leader is elected in the majority", leader())
run(1*s)
heal()

local victim = others(leader())[1]
kill(victim)
run(1*s)
expect(not status(victim).alive, "a killed member is down", victim)
restart(victim)
run_until(function() return status(victim).alive and status(victim).leader_node ~= nil end, 10*s)

local g = c:get("smoke/a")
expect(g ~= nil and g.value == "1", "the value written before the faults is still there",
       g and g.value)
local t = c:lease_ttl(l.id)
expect(t ~= nil and t.ttl > 0, "the lease outlived the faults", t and t.ttl)
compact(g.revision)
defrag(leader())
heal_all()
run(1*s)
