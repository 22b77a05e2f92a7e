-- progress_lagging.lua: a watch resumes on a member that is behind the one it came
-- from. Its progress notifications must never go back below the events it already
-- received (etcd's Bookmarkable guarantee): the lagging member stays silent until it
-- reaches the watch's start revision. (Found by the swarm: "progress notification went
-- back from 31 to 23", chaos seed 17 and 25 others of 200.)
scenario {
  name = "progress-lagging",
  cluster = { nodes = 3, progress_notify_ms = 100 },
  clients = { balancers = { "pinned_blacklist", "pinned_blacklist" } },
  workload = { rate = 0 },
  checks = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected")
isolate(3) -- member 3 falls behind
local got = 0
-- pinned_blacklist pins the first member that answers: member 1
client(1):watch("k", { prefix = true, progress_notify = true,
                       callback = function(ev) got = got + 1 end })
run(200*ms)
for i = 1, 20 do client(2):put("k" .. i, "v" .. i) end
run(500*ms)
expect(got == 20, "the watch received every write", got)
kill(1)
kill(2) -- the watch can only resume on member 3, which is behind
run(2*s)
heal_all()
run(2*s)
