-- pinned_node_error.lua: a call pinned with `node = n` still goes through the client's
-- retry rules (a read is retried on Unavailable, as clientv3 retries immutable calls),
-- so against a member without a leader a require_leader read ends at its deadline and
-- the final error names the last server error the retries swallowed; with a longer
-- deadline clientv3's 100 attempts run out first and the last error is returned as is.
scenario { name = "pinned-node-error", cluster = { nodes = 3 }, clients = { count = 1 },
           checks = { "linearizability", "raft_safety" } }
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected")
local c = client(1)
c:put("k", "v")
local f = others(leader())[1]
isolate(f)
-- the isolated follower forgets its leader after an election timeout (check-quorum and
-- pre-vote keep it from disrupting the others)
expect(run_until(function() return status(f).leader_id == nil end, 10*s),
       "the isolated member has no leader", status(f).leader_id)
local t = now()
local r, err, st = c:get("k", { node = f, require_leader = true, timeout = 500*ms })
expect(r == nil and err == "context deadline exceeded (last: etcdserver: no leader)",
       "the deadline error carries the last server error", { err = err, status = st })
expect(st == "fail" and now() - t >= 500*ms, "a read that timed out is a definite failure",
       { status = st, ms = (now() - t) // ms })
t = now()
r, err, st = c:get("k", { node = f, require_leader = true, timeout = 10*s })
expect(r == nil and err == "etcdserver: no leader" and now() - t < 10*s,
       "after 100 attempts the last server error is returned before the deadline",
       { err = err, ms = (now() - t) // ms })
heal()
run(2*s)
