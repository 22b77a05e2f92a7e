-- replay_client.lua: fails one expect because of a client-side cut, among decoy
-- faults (member and client faults that change nothing the expect looks at). Used by
-- replay_check.py: the failing run's replay command gives the same digest, and
-- `faultline shrink` keeps only the client fault (by its ordinal).
scenario {
  name = "cnet-replay",
  clients = { count = 2, balancer = "round_robin", timeout_ms = 1000 },
  workload = { rate = 50, keys = 4 },
}
run_until(function() return leader() ~= nil end, 10 * s)
local c = client(1)
hold(client(2), nil)              -- decoy: client 2's frames wait
run(200 * ms)
release(client(2), nil)
net { delay_ms = 5, from = client(2) } -- decoy
run(200 * ms)
net { from = client(2) }
isolate(client(1))                -- the fault the expect below depends on
run(300 * ms)
local r = c:get("k", { serializable = true, timeout = 500 * ms })
heal()
clog(client(2), 1)                -- decoy
run(200 * ms)
clog(client(2), 1, false)
run(1 * s)
expect(r ~= nil, "client 1 reads while it is cut from every member", r)
