-- api_client.lua: every client call, watches with a callback and with an iterator.
scenario { name = "api-client", description = "client calls, watches, leases",
           cluster = { nodes = 3 }, clients = { count = 2, balancer = "round_robin" },
           checks = { "linearizability", "watch", "raft_safety" } }
run_until(function() return leader() ~= nil end, 10*s)
local c, d = client(1), client(2)
local seen = {}
local wcb = d:watch("k/", { prefix = true, prev_kv = true,
                           callback = function(ev) seen[#seen + 1] = ev.type .. ":" .. ev.key end })
local w = c:watch("k/a", { start_rev = 0 })
expect(w:id() > 0, "watch id", w:id())
local p = c:put("k/a", "1")
expect(p and p.revision > 0, "put returns a revision", p)
local g = c:get("k/a")
expect(g and g.value == "1" and g.kvs[1].mod_revision == p.revision, "get reads it", g)
local ev = w:next(2*s)
expect(ev and ev.type == "put" and ev.value == "1", "watch:next delivers the put", ev)
c:put("k/b", "2")
local r = c:get("k/", { prefix = true })
expect(r and r.count == 2, "prefix range", r and r.count)
local t = c:txn { compare = { { key = "k/a", target = "value", result = "=", value = "1" } },
                  success = { { put = { key = "k/a", value = "3" } } },
                  failure = { { get = { key = "k/a" } } } }
expect(t and t.succeeded, "txn compare-and-set succeeds", t)
local t2 = c:txn { compare = { { key = "k/a", target = "mod", result = "<", mod_revision = 1 } },
                   success = {}, failure = { { get = { key = "k/a" } } } }
expect(t2 and not t2.succeeded and t2.responses[1].value == "3", "txn else branch", t2)
local del = c:delete("k/b")
expect(del and del.deleted == 1, "delete one", del)
local n = 0
for e in w:events(500*ms) do n = n + 1 end
expect(n >= 1, "watch:events iterates until a timeout", n)
w:cancel()
local lg = c:lease_grant(10)
expect(lg and lg.id ~= 0, "lease granted", lg)
local ka = c:lease_keepalive(lg.id, { require_leader = true })
c:put("k/lease", "x", { lease = lg.id })
run(1*s)
local tt = c:lease_ttl(lg.id)
expect(tt ~= nil, "lease ttl", tt)
c:lease_keepalive_stop(ka)
local rv = c:lease_revoke(lg.id)
expect(rv ~= nil, "lease revoked", rv)
run(500*ms)
expect(#seen >= 3, "the callback watch saw the writes", seen)
local st = c:stats()
expect(st.ok >= 8 and st.balancer == "round_robin", "client stats", st)
wcb:cancel()
