-- fresh_hung.lua (etcd target): the Status round after a control call does not wait for
-- a member that runs but does not serve. Member n is cut from its peers and restarted:
-- it cannot join, so etcd never serves on it and a Status call to it hangs until its
-- 1 s timeout. The world stands still while the round after each defrag is waited for,
-- and a call made right after then looks slow by as much; a put to the leader right
-- after each of three defrags must take well under a second (at least once).
scenario {
  name = "etcd-fresh-hung",
  cluster = { nodes = 3 },
  clients = { count = 1 },
  workload = { rate = 5, keys = 4 },
  checks = { "linearizability" },
}
expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
local l = leader()
local n = others(l)[1]
isolate(n)
kill(n)
restart(n)
run(2*s)
expect(status(n).alive and status(n).leader_node == nil, "member " .. n .. " runs and does not serve",
       status(n))
local best = math.huge
for i = 1, 3 do
  local ok, err = defrag(l)
  expect(ok ~= nil, "defrag " .. i, err)
  local t = now()
  local r, perr = client(1):put("hung/" .. i, "x", { node = l })
  expect(r ~= nil, "put " .. i, perr)
  best = math.min(best, (now() - t) // ms)
  run(300*ms)
end
expect(best < 600, "a put right after a control call is not held up by the hung member", best)
heal()
