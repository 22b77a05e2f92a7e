-- peer_dial_lost.lua: a member's connection attempt to a peer must time out when its
-- answer is lost (the peer refused it while dead, and the refusal never left the
-- peer's machine: it died again with the frame waiting behind a one-way cut). The peer
-- transport only closed outgoing connections not heard from for 5 s, and "heard from"
-- counted the frames arriving on the peer's own connection the other way: once the
-- peer was back and campaigning at us, the dead attempt never timed out and the leader
-- never reached the restarted member again (found by the swarm, chaos seed 8 in a
-- draft with fewer fault lanes: converge failed, one member stuck 15 s at revision 40
-- while the others went on). etcd's peer transport dials with a timeout.
scenario {
  name = "peer-dial-lost",
  cluster = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients = { count = 1 },
  workload = { rate = 20, keys = 4 },
  checks = { "linearizability", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a first leader")
run(1*s)
local l = leader()
local f = others(l)[1]
partition({ f }, { l }, { oneway = true }) -- what f sends l waits on the link
kill(f)
run(6*s)    -- l's connection times out; l dials f, dead: the refusal waits on the link
restart(f)
run(200*ms)
kill(f)     -- frames of a dead process that never left its machine are lost: the refusal too
run(200*ms)
heal()
restart(f)  -- f dials l, and its frames (campaigns) reach l from now on
expect(run_until(function() return status(f).leader_node == l end, 10*s),
       "the restarted member hears from the leader again",
       { leader = l, restarted = f, follows = status(f).leader_node })
