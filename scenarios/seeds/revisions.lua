-- revisions.lua: etcd's revision model under client load. The store revision grows by
-- one per write transaction (a put, a delete that removes something, a txn with writes
-- is ONE revision however many keys it touches); every key keeps create_revision,
-- mod_revision and version; a delete ends the key's generation and a later put starts
-- a new one (version 1, new create_revision); every revision stays readable until it is
-- compacted; a read at a revision above the current one fails with etcd's text.
-- Asserted on the values, revisions and errors read back, while a workload writes other
-- keys, across a leader kill and a member restart (the revision never goes back, never
-- repeats; a watch on every key sees each revision from 2 to the last, none skipped),
-- and by all four checkers.
scenario {
  name = "revisions",
  description = "revisions, create/mod revision, version, generations, reads at a revision, txn as one revision",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 60, keys = 8, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local FUTURE = "etcdserver: mvcc: required revision is a future revision"
local DUP = "etcdserver: duplicate key given in txn request"

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local seen = 0 -- highest revision observed in one of our answers
local function newer(r, what)
  expect(r ~= nil and r.revision > seen, what .. ": the revision grows", r and r.revision)
  if r then seen = r.revision end
  return r
end

-- a watch on our own keys: each write shows as events at the revision we were told
local w = c:watch("rev/", { prefix = true, prev_kv = true })
-- a watch on every key from the first revision: each revision is one write transaction
-- that changed something, so it sees every revision, none skipped
local all = {}
client(2):watch("\0", { range_end = "\0", start_rev = 1, callback = function(ev)
  all[#all + 1] = ev.mod_revision
end })

-- first put: create == mod, version 1
local p1 = newer(c:put("rev/a", "1"), "first put")
local g = c:get("rev/a")
expect(g and g.kvs[1].create_revision == p1.revision and g.kvs[1].mod_revision == p1.revision
       and g.kvs[1].version == 1, "a new key: create = mod = the put's revision, version 1",
       g and g.kvs[1])
expect(g and g.revision >= p1.revision, "a read's header revision is at least the write's", g and g.revision)

-- second put: mod moves, create stays, version 2, prev_kv is the first value
local p2 = newer(c:put("rev/a", "2", { prev_kv = true }), "second put")
expect(p2 and p2.prev_kv and p2.prev_kv.value == "1" and p2.prev_kv.mod_revision == p1.revision,
       "prev_kv returns the value it replaced", p2 and p2.prev_kv)
g = c:get("rev/a")
expect(g and g.kvs[1].create_revision == p1.revision and g.kvs[1].mod_revision == p2.revision
       and g.kvs[1].version == 2, "an update: create stays, mod = the new revision, version 2",
       g and g.kvs[1])

-- every revision stays readable: the old value at the old revision
local old = c:get("rev/a", { revision = p1.revision })
expect(old and old.value == "1" and old.kvs[1].mod_revision == p1.revision,
       "a read at an older revision sees the value of that revision", old and old.kvs[1])

-- a txn writing two keys is one revision
local t = newer(c:txn { compare = {{ key = "rev/a", target = "mod", result = "=", mod_revision = p2.revision }},
                 success = {{ put = { key = "rev/b", value = "b1" } }, { put = { key = "rev/c", value = "c1" } }},
                 failure = {{ get = { key = "rev/a" } }} }, "txn")
expect(t and t.succeeded, "a compare on the mod revision holds", t and t.succeeded)
local bc = c:get("rev/b", { range_end = "rev/d" })
expect(bc and bc.count == 2 and bc.kvs[1].mod_revision == t.revision and bc.kvs[2].mod_revision == t.revision,
       "both keys of one txn carry the txn's single revision", bc and bc.kvs)

-- compares on version and create revision read the same fields
local tv = c:txn { compare = {{ key = "rev/a", target = "version", result = "=", version = 2 },
                              { key = "rev/a", target = "create", result = "=", create_revision = p1.revision },
                              { key = "rev/nope", target = "version", result = "=", version = 0 }},
                   success = {{ get = { key = "rev/a" } }}, failure = {} }
expect(tv and tv.succeeded and tv.revision >= t.revision,
       "compares on version and create revision hold (a missing key has version 0)", tv and tv.succeeded)

-- a failing compare runs the else branch and writes nothing
local tf = c:txn { compare = {{ key = "rev/a", target = "value", result = "=", value = "nope" }},
                   success = {{ put = { key = "rev/a", value = "never" } }},
                   failure = {{ get = { key = "rev/a" } }} }
expect(tf and not tf.succeeded and tf.responses[1].value == "2",
       "a failing compare runs the failure branch", tf and tf.responses)

-- a key written twice in one branch is refused with etcd's text
local td, tderr = c:txn { success = {{ put = { key = "rev/x", value = "1" } }, { put = { key = "rev/x", value = "2" } }} }
expect(td == nil and tderr == DUP, "a key written twice in one txn branch is refused", tderr)

-- delete ends the generation; a new put starts version 1 with a new create revision
local d = newer(c:delete("rev/a", { prev_kv = true }), "delete")
expect(d and d.deleted == 1, "delete removes the key", d and d.deleted)
g = c:get("rev/a")
expect(g and g.count == 0, "a deleted key is absent", g and g.count)
local before = c:get("rev/a", { revision = d.revision - 1 })
expect(before and before.value == "2", "the revision before the delete still shows the key", before and before.value)
local p3 = newer(c:put("rev/a", "3"), "put after delete")
g = c:get("rev/a")
expect(g and g.kvs[1].create_revision == p3.revision and g.kvs[1].version == 1,
       "a put after a delete starts a new generation", g and g.kvs[1])

-- reads above the current revision fail with etcd's text
local f, ferr = c:get("rev/a", { revision = seen + 100000 })
expect(f == nil and ferr == FUTURE, "a read at a future revision is refused", ferr)

-- the watch saw each of our writes, in order, at the revisions we were told
local want = { {"put", "rev/a", p1.revision}, {"put", "rev/a", p2.revision},
               {"put", "rev/b", t.revision}, {"put", "rev/c", t.revision},
               {"delete", "rev/a", d.revision}, {"put", "rev/a", p3.revision} }
local got = {}
for ev in w:events(2*s) do got[#got + 1] = ev end
local same = #got == #want
for i = 1, math.min(#got, #want) do
  same = same and got[i].type == want[i][1] and got[i].key == want[i][2] and got[i].mod_revision == want[i][3]
end
expect(same, "the watch delivered exactly our writes, in revision order", #got)
expect(got[5] and got[5].prev_kv and got[5].prev_kv.value == "2", "the delete event carries the previous value",
       got[5] and got[5].prev_kv)

-- a leader change and a member restart never move the revision back
local l = leader()
kill(l)
run_until(function() local n = leader(); return n ~= nil and n ~= l end, 10*s)
local p4 = newer(c:put("rev/a", "4"), "put under a new leader")
restart(l)
run(2*s)
local other = others(leader())[1]
kill(other)
run(500*ms)
restart(other)
run(2*s)
local p5 = newer(c:put("rev/a", "5"), "put after a member restart")
g = c:get("rev/a")
expect(g and g.kvs[1].version == 3 and g.kvs[1].create_revision == p3.revision
       and g.kvs[1].mod_revision == p5.revision, "the key's history survives the faults", g and g.kvs[1])
local mid = c:get("rev/a", { revision = p4.revision })
expect(mid and mid.value == "4", "the revision written under the new leader is readable", mid and mid.value)
heal_all()
local last = c:put("rev/end", "1")
run(1*s)
local holes, back, distinct = 0, 0, 1
for i = 2, #all do
  if all[i] < all[i - 1] then back = back + 1
  elseif all[i] > all[i - 1] + 1 then holes = holes + 1 end
  if all[i] ~= all[i - 1] and all[i] <= last.revision then distinct = distinct + 1 end
end
expect(last and all[1] == 2 and all[#all] >= last.revision and holes == 0 and back == 0
       and distinct == last.revision - 1,
       "revisions 2..last each carry at least one change: one revision per write transaction",
       { first = all[1], last = all[#all], put = last and last.revision, distinct = distinct,
         holes = holes, back = back })
