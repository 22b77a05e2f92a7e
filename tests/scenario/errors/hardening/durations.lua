-- issue 12 item 12: durations and times out of range are script errors everywhere the
-- API takes one (they overflowed the simulated clock before).
scenario { name = "durations" }
run_until(function() return leader() ~= nil end, 10 * s)
local function refused(what, fn, ...)
  local ok, err = pcall(fn, ...)
  expect(not ok and (err:find("out of range", 1, true) or err:find("past the end of simulated time", 1, true)
                     or err:find("negative", 1, true) or err:find("nan", 1, true)),
         what .. " is refused", err)
end
local big = math.maxinteger - 10
refused("run(maxinteger-10)", run, big)
refused("run(2^62+1)", run, (1 << 62) + 1)
refused("run(2^63 as a float)", run, 2^63)
refused("run(-1)", run, -1)
refused("run(nan)", run, 0/0)
refused("sleep(maxinteger)", sleep, math.maxinteger)
refused("run(2^62): the deadline passes the end", run, 1 << 62)
refused("run_until limit", run_until, function() return false end, big)
refused("run_until poll", run_until, function() return false end, 1 * s, big)
refused("nemesis every", nemesis, { every = big })
refused("nemesis every (the jitter passes the end)", nemesis, { every = 1 << 62 })
refused("nemesis duration", nemesis, { every = 1 * s, duration = big })
refused("node_events since", node_events, { since = -5 })
local c = client(1)
refused("put timeout", c.put, c, "k", "v", { timeout = big })
refused("get timeout", c.get, c, "k", { timeout = 1 << 62 })
refused("txn timeout", c.txn, c, { success = {}, timeout = big })
local w = c:watch("k")
refused("watch:next timeout", w.next, w, big)
local ok = pcall(function() for _ in w:events(big) do end end)
expect(not ok, "watch:events timeout is refused")
-- in range, everything still works
expect(run(1 * ms) ~= nil, "run(1ms) still works")
expect(c:put("k", "v", { timeout = 3 * s }) ~= nil, "a put with a timeout still works")
expect(w:next(100 * ms) ~= nil, "watch:next still works")
