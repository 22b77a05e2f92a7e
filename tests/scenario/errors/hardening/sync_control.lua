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
run(6 * s) -- the strict reconfiguration check wants every voter connected for 5 s
-- three removals in a row: each returns true or nil, message (never a stray yield)
local answers = {}
for i = 1, 3 do
  local l = leader()
  local r, err = member_remove(i < 3 and others(l)[1] or l)
  expect(r == true or (r == nil and type(err) == "string" and #err > 0),
         "removal " .. i .. " returns true or nil, message", err)
  answers[#answers + 1] = r and "ok" or err
  run(100 * ms)
end
expect(answers[3] ~= "ok", "the third removal (the last voter but one) is refused", answers)
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
