-- 512 clients, the cap (issue 17 §2's largest cost-curve point), all of them working
scenario { name = "clients_512", clients = { count = 512 }, checks = { "linearizability" } }
expect(run_until(function() return leader() ~= nil end, 5*s), "a leader")
local ok = 0
for i = 1, 512, 73 do
  if client(i):put("k" .. i, "v") then ok = ok + 1 end
end
expect(ok == 8, "8 of the 512 clients write", ok)
