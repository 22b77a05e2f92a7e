-- run/lease_expire.lua: a lease expires (no keep-alive), so the cluster deletes its
-- keys with no client call behind it; a member restarts and replays the expiry.
-- lease_expire_recorded.py checks the history holds exactly one system op for it.
scenario {
  name = "lease-expire-recorded",
  clients = { count = 1 },
  checks  = { "linearizability", "watch", "raft_safety", "converge" },
}
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local rev
c:watch("le/", { prefix = true, callback = function(ev)
  if ev.type == "delete" then rev = ev.mod_revision end
end })
local l = c:lease_grant(2)
c:put("le/a", "1", { lease = l.id })
c:put("le/b", "2", { lease = l.id })
run(6*s)
expect(rev ~= nil, "the expiry deletes the keys", rev)
local f = others(leader())[1]
kill(f)
run(1*s)
restart(f)
run(3*s)
print("delete revision", rev)
