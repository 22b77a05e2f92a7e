-- commit-old-term.lua (bug raft.commit_old_term): Raft's Figure 8 (§5.4.2), built in a
-- live cluster. A leader may count replicas to commit only entries of its own term;
-- earlier-term entries are committed indirectly, by a current-term entry after them.
-- (a) Leader A, cut off with B from the other three, appends a large entry X (term T)
-- that reaches B only. A dies. (b) One of the other three, E, wins term T+1 and makes its
-- own entry Y durable at X's index, but dies before sending it (its disk holds messages
-- back). (c) A comes back and leads a later term (or B does, with the same log); it sends
-- X to C — X is larger than a message, so it travels alone — but its own new-term entry
-- reaches neither C nor D (their links from the leader are held). X is now on three of
-- five members but is of an old term: correctly it is NOT committed; with the bug the
-- leader counts the three replicas and commits it. (d) The leader dies; E comes back and
-- wins (its last term T+1 beats C's and D's T) with C and D, and replaces X by Y at that
-- index. Correctly nothing committed is lost; with the bug the committed X is gone.
-- Caught by raft_safety (a committed entry replaced) and by the expect on the leader's
-- commit index in (c). Links have 20 ms latency so the
-- script can act between two messages; the background workload is off so that the log
-- indexes are exactly the ones the script reasons about.
scenario {
  name = "commit-old-term",
  description = "Raft Figure 8: an old-term entry on a majority is not committed by counting (bug: raft.commit_old_term)",
  cluster  = { nodes = 5, election_ms = 1000, heartbeat_ms = 100, latency_us = 20000, jitter_us = 0 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 3000 },
  workload = { rate = 0 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local POLL = 1*ms
local function leader_among(list)
  for _, n in ipairs(list) do
    local st = status(n)
    if st.alive and st.leader then return n end
  end
  return nil
end

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
for i = 1, 5 do c:put("f8/" .. i, "v" .. i) end
run(500*ms)
local A = leader()
local rest = others(A)
local B, C, D, E = rest[1], rest[2], rest[3], rest[4]
local T = status(A).term

-- (a) X reaches B only
partition({ A, B }, { C, D, E })
spawn(function() c:put("f8/x", string.rep("x", 1200000), { node = A }) end)
local xi = status(A).last_index + 1
run_until(function() return status(B).last_index >= xi end, 2*s, POLL)
expect(status(B).last_index == xi and status(C).last_index == xi - 1,
       "(a) the old-term entry X is on A and B only", { x_index = xi, b = status(B).last_index })
kill(A)

-- (b) one of C, D, E wins term T+1; its entry at X's index is durable but never sent
for _, n in ipairs({ C, D, E }) do
  failpoint("raft/after_save", { node = n, action = "delay", delay_ms = 150 })
end
skew(E, 2.0)
run_until(function() return leader_among({ C, D, E }) ~= nil end, 10*s, POLL)
local Ep = leader_among({ C, D, E })
expect(Ep ~= nil, "(b) a leader of term T+1 is elected among the three", Ep)
if not Ep then return end
run(20*ms)
kill(Ep)
skew(E, 1.0)
local voters3 = {}
for _, n in ipairs({ C, D, E }) do
  failpoint("raft/after_save", { node = n, action = "off" })
  if n ~= Ep then voters3[#voters3 + 1] = n end
end
C, D = voters3[1], voters3[2] -- the two that will hold X (C) and nothing new (D)
expect(status(C).last_index == xi - 1 and status(D).last_index == xi - 1,
       "(b) its entry reached nobody", { c = status(C).last_index, d = status(D).last_index })

-- (c) A (or B) leads a later term; X reaches C alone, the new-term entry reaches neither
heal()
restart(A)
skew(A, 5.0)
run_until(function() return leader_among({ A, B }) ~= nil end, 15*s, POLL)
local P = leader_among({ A, B })
expect(P ~= nil, "(c) A or B leads a later term", P)
if not P then return end
hold(P, D)
run_until(function() return status(C).last_index >= xi end, 5*s, POLL)
hold(P, C)
skew(A, 1.0)
expect(status(C).last_index == xi, "(c) X reached C without the leader's new-term entry",
       { c = status(C).last_index, x_index = xi })
run(500*ms)
expect(status(P).commit < xi, "(c) X, of an old term, is not committed by counting its replicas",
       { leader_commit = status(P).commit, x_index = xi })

-- (d) the leader dies; Ep comes back with its term-(T+1) entry and wins with C and D
kill(P)
restart(Ep)
skew(Ep, 5.0)
local won = run_until(function() return leader_among({ Ep }) ~= nil end, 15*s, POLL)
expect(won, "(d) the member with the term-(T+1) entry wins with C and D", leader())
skew(Ep, 1.0)
run(2*s)
heal_all()
run(3*s)
