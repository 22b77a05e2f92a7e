-- api_admin.lua: membership and maintenance calls.
scenario { name = "api-admin", description = "membership and maintenance",
           cluster = { nodes = 3 }, clients = { count = 1 },
           workload = { rate = 20, keys = 4 },
           checks = { "linearizability", "raft_safety" } }
run_until(function() return leader() ~= nil end, 10*s)
run(5*s) -- etcd's strict reconfiguration check: every voter connected for 5 s first
local c = client(1)
for i = 1, 5 do c:put("adm/" .. i, tostring(i)) end
local id, err = member_add { learner = true }
expect(id ~= nil, "a learner is added", err or id)
run(3*s)
local ok, perr = member_promote(id)
expect(ok or perr ~= nil, "promote answers", perr)
run(1*s)
local l = leader()
local target = others(l)[1]
local mv, merr = move_leader(target)
expect(mv or merr ~= nil, "move_leader answers", merr)
run(2*s)
local victim = others(leader())[1]
local rm, rerr = member_remove(victim)
expect(rm or rerr ~= nil, "member_remove answers", rerr)
run(1*s)
local g = c:get("adm/5")
local cp, cerr = compact(g and g.revision or 2)
expect(cp or cerr ~= nil, "compact answers", cerr)
if cp and g then
  -- a watch from below the compacted revision is canceled with etcd's text
  local w = c:watch("adm/", { prefix = true, start_rev = 1 })
  local ev, why, reason, crev = w:next(2*s)
  expect(ev == nil and why == "canceled" and reason:find("compacted") ~= nil and crev >= 1,
         "watch:next tells why the watch was canceled", { why, reason, crev })
end
local df, derr = defrag(leader())
expect(df or derr ~= nil, "defrag answers", derr)
local snap, serr = snapshot_save(leader())
expect(snap ~= nil and snap:size() > 0, "snapshot saved", serr or snap:size())
local bad = snap:corrupt()
expect(bad:size() == snap:size(), "corrupt copies", bad:size())
local raw = copy_db(leader())
expect(raw ~= nil and #raw > 0, "copy_db", raw and #raw)
local ad, aerr = alarm_disarm()
expect(ad or aerr ~= nil, "alarm_disarm answers", aerr)
local rs, rserr = restore(bad, { nodes = nodes() })
expect(rs == nil and rserr ~= nil, "a corrupted backup is refused", rserr)
local rs2, rs2err = restore(snap, { nodes = nodes() })
expect(rs2 ~= nil, "restore from the backup", rs2err)
run(3*s)
