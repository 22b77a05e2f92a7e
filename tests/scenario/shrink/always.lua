-- shrink/always.lua: fails with no fault, no workload and no waiting, so there is
-- nothing to shrink (`faultline shrink` exits 1 and writes nothing).
scenario { name = "shrink-always", clients = { count = 1 }, checks = { "raft_safety" } }
expect(false, "always fails")
