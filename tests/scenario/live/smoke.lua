-- smoke.lua (live target): the live smoke of issue 16 §2 against our own members, each
-- its own OS process (`faultline member`). Three members, four clients (one per
-- balancer policy) under a mixed workload with two watchers, our own watch with
-- prev_kv; the leader is partitioned away from the others (its peer links cut through
-- the proxies), a new leader must appear; then a follower is killed (SIGKILL) and
-- restarted on its data directory, another paused and resumed, and one member's clock
-- skewed; compact() and defrag() go to the processes. Linearizability and the watch
-- guarantees must hold.
scenario {
  name = "live-smoke",
  description = "live target: partition, kill/restart, pause, skew, 4 balancers, watches",
  cluster  = { nodes = 3 },
  clients  = { balancers = { "round_robin", "pinned_random", "pinned_blacklist",
                             "health_aware" }, timeout_ms = 2000 },
  workload = { rate = 100, keys = 8, mix = { put = 5, get = 4, delete = 1, txn = 1, range = 1 },
               watchers = 2 },
  checks   = { "linearizability", "watch" },
}

run_until(function() return leader() ~= nil end, 10*s)
local old = leader()
expect(old ~= nil, "a leader is known at start", old)
expect(status(old).version:match("faultline") ~= nil, "status() is our member's own",
       status(old).version)

local c = client(1)
local r0 = c:get("smoke/a", { timeout = 5*s })
expect(r0 ~= nil, "a read on a healthy cluster", r0)
local w = c:watch("smoke/", { prefix = true, prev_kv = true, start_rev = r0.revision + 1 })
local r, err = c:put("smoke/a", "1")
expect(r ~= nil and r.revision > 1, "a put succeeds on a healthy cluster", err)
local ev = w:next(2*s)
expect(ev ~= nil and ev.key == "smoke/a" and ev.value == "1", "the watch sees the put",
       ev and ev.key)

run(500*ms)
partition({ old }, others(old))
local moved = run_until(function() local n = leader(); return n ~= nil and n ~= old end, 10*s)
expect(moved, "a new leader is elected in the majority", leader())
run(500*ms)
heal()

local victim = others(leader())[1]
kill(victim)
run(500*ms)
expect(not status(victim).alive, "a killed member is down", victim)
restart(victim)
skew(victim, 2.0) -- at once: the process may not take signals yet (it gets it when it can)
local back = run_until(function()
  return status(victim).alive and status(victim).leader_node ~= nil end, 10*s)
expect(back, "the restarted member follows a leader again", victim)

local p = others(leader())[1]
pause(p)
run(500*ms)
expect(status(p).paused, "a paused member is paused", p)
resume(p)
skew(p, 1.5)
run(500*ms)

local g = c:get("smoke/a")
expect(g ~= nil and g.value == "1", "the value written before the faults is still there",
       g and g.value)
local r2 = c:put("smoke/b", "2")
expect(r2 ~= nil, "a put succeeds after the faults", r2)
local ev2 = w:next(5*s)
expect(ev2 ~= nil and ev2.key == "smoke/b" and ev2.value == "2",
       "the watch still delivers after the faults", ev2 and ev2.key)
local ok, cerr = compact(g.revision)
expect(ok, "compact() reaches the member processes", cerr)
local old_read, oerr = c:get("smoke/a", { revision = g.revision - 1 })
expect(old_read == nil and oerr == "etcdserver: mvcc: required revision has been compacted", "a read below the compaction is refused", oerr)
local dok, derr = defrag(leader())
expect(dok, "defrag() reaches the leader's process", derr)
heal_all()
run(500*ms)
