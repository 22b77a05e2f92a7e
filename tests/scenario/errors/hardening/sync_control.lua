-- issue 12 item 19: control calls the cluster refuses at once return nil, message (the
-- answer came before the coroutine could yield; it used to fail the run with "a
-- coroutine yielded outside the scenario API").
scenario { name = "sync-control", cluster = { nodes = 3 } }
run_until(function() return leader() ~= nil end, 10 * s)
local function refused(what, r, err)
  expect(r == nil and type(err) == "string" and #err > 0, what .. " returns nil, message", err)
end
kill(1)
refused("defrag of a dead member", defrag(1))
refused("snapshot_save of a dead member", snapshot_save(1))
refused("move_leader to a dead member", move_leader(1))
refused("member_promote of a dead member", member_promote(1))
for _ = 1, 3 do refused("defrag again", defrag(1)) end
restart(1)
run_until(function() return leader() ~= nil end, 10 * s)
run(2 * s)
local l = leader()
expect(member_remove(others(l)[1]) == true, "the first removal works")
expect(member_remove(others(l)[1]) == true, "the second removal works")
refused("removing the last follower's leader", member_remove(l))
for _, n in ipairs(nodes()) do kill(n) end
refused("member_add with every member dead", member_add())
refused("member_add { learner } with every member dead", member_add { learner = true })
refused("compact with every member dead", compact(10))
refused("alarm_disarm with every member dead", alarm_disarm())
-- from a spawned coroutine too
local done = false
spawn(function() refused("defrag in a spawn", defrag(nodes()[1])); done = true end)
run(10 * ms)
expect(done, "the spawned call returned")
