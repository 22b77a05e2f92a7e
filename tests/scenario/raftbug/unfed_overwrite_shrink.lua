-- unfed_overwrite.lua (tests/cmake/raftbug.cmake): scenarios/chaos.lua as it was at
-- c945083, narrowed by the shrink{} line below, at seed 8000669169896689. Member n1
-- restarts with (203, term 2); leader n3 (term 4) overwrites it with (203, term 4), the
-- write reaches the disk but n1 is paused (on its append) before its fsync's callback
-- feeds the safety checker, then a power loss kills everyone. n1 comes back with
-- (203, term 4) that the checker never saw, and the entries 204.. it then takes from
-- leader n4 (term 7) were reported as a log_matching failure. The checker now takes a
-- restarted member's recovered log (raft_safety_boot.entries): raft_safety passes.
shrink{ lanes = {"leader_crash"}, add_faults = {{kind = "pause", node = 1, at = 5487*ms, len = 3138*ms, on = "append"}, {kind = "power", node = 0, at = 9212*ms, len = 2259*ms, on = "leader"}} };
-- chaos.lua: swarm chaos, for sweeps over many seeds. Each seed draws its own world
-- (swarm{}): cluster size 1/3/5/7, pre-vote and check-quorum, election and heartbeat
-- timeouts, snapshot count and retained entries, auto-compaction, quota, fsync latency
-- per member, network latency, clients and a balancer policy each, a workload mix
-- with txns, ranges, deletes, leases that expire and churning watches; which fault
-- lanes run and how often (partitions of every Jepsen shape, kills, power loss,
-- pauses, clock skew, packet loss/duplication/delay, held links, membership changes,
-- leadership transfer, compaction, defragmentation, NOSPACE recovery, backups, leader
-- churn on 40% of the worlds without membership changes), which
-- failpoints fire (BUGGIFY) and which faults fire on node events (triggers). The
-- fault phase ends with heal_all(); then the cluster must come back: a leader, a
-- write that succeeds, every client failing over when the member most of them use
-- dies, and convergence (the converge check). liveness judges the cluster after every
-- heal and while only a minority is faulty: a write within the world's bound. On the
-- seeds that draw them, two removals are asked at once across a partition
-- (world.split_change), a promoted member's vote is needed (world.promote_outage) and
-- Raft's Figure 8 is made on purpose (world.figure8) at the end (below). Worlds with
-- the lag lane run it without the lanes that kill, pause or cut members off (world.lag).
local world = swarm {}

scenario {
  name = "chaos",
  description = "swarm chaos: each seed draws its cluster, clients, workload, faults, failpoints and triggers",
  checks = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

local E = world.cluster.election_ms * ms
local TIMEOUT = world.clients.timeout_ms * ms

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
run(1*s)
nemesis { duration = 12*s }
run(12*s)
heal_all()

-- the cluster comes back: a leader, and a write that succeeds
local up = run_until(function() return leader() ~= nil end, 10*s + 10*E)
expect(up, "a leader after the fault phase", leader())
if not up then return end
local c = client(1)
-- etcd's NOSPACE recovery: compact, let every member apply it, defragment every member,
-- disarm; again whenever the alarm is back (the workload goes on writing meanwhile)
local function nospace_recover()
  local r = c:get("chaos/alive", { timeout = TIMEOUT })
  if r then compact(r.revision) end
  run(E)
  for _, n in ipairs(nodes()) do if status(n).alive then defrag(n) end end
  alarm_disarm()
end
-- after a failed try, the next go straight to each member in turn, past the balancer: a
-- pinned client may sit on a member whose slow disk times every call out while the
-- cluster serves (seed 1087: pinned_random on n1, slow_disks [1]); the claim is the
-- cluster's, and the client's own failover is judged below
local tries = 0
local function put_ok()
  local opts = { timeout = TIMEOUT }
  if tries > 0 then
    local ns = nodes()
    opts.node = ns[(tries - 1) % #ns + 1]
  end
  local r, err = c:put("chaos/alive", "x", opts)
  tries = r and 0 or tries + 1
  if not r and world.cluster.quota_bytes > 0 and err and err:find("space exceeded", 1, true) then
    nospace_recover()
  end
  return r ~= nil
end
if world.cluster.quota_bytes > 0 then nospace_recover() end
expect(run_until(put_ok, 10*s + 10*E, 100*ms), "a write succeeds after the fault phase")
run(1*s)

-- every client fails over when the member most of them last used dies: once a read sent
-- straight to a surviving member succeeds (a quorum is left), each client that used it
-- reads within five request timeouts (all four policies fail over within one or two;
-- the margin is for a client that lands on a member whose slow disk makes its reads
-- time out too). A client on another member has nothing to fail over from: no claim
-- (pinned to a surviving member with a slow disk, it times out while that member
-- answers, and a pinned policy rightly stays: seed 885 of 201..1000). (When the kill
-- takes the quorum away, e.g. two voters left by a membership change, there is nothing
-- to fail over to: no claim then.)
local NC = #world.clients.balancers
if #nodes() >= 3 then
  local count, target, most, last = {}, nil, 0, {}
  for i = 1, NC do
    local n = client(i):stats().last_node
    last[i] = n
    if n and n > 0 then
      count[n] = (count[n] or 0) + 1
      if count[n] > most then target, most = n, count[n] end
    end
  end
  if target and status(target).alive then
    local LIMIT = 3 * E + 6 * TIMEOUT + 5*s
    local t0, first = now(), {}
    kill(target)
    for i = 1, NC do
      spawn(function()
        while now() - t0 < LIMIT do
          if client(i):get("chaos/alive", { timeout = TIMEOUT }) then first[i] = now() - t0 return end
          sleep(50*ms)
        end
      end)
    end
    -- is a quorum left? a read sent straight to a surviving member (past every balancer)
    -- tells: q_at is when the first one succeeded
    local q_at
    spawn(function()
      while now() - t0 < 3 * E + 2*s and not q_at do
        for _, n in ipairs(nodes()) do
          if not q_at and n ~= target and status(n).alive and
             client(1):get("chaos/alive", { node = n, timeout = TIMEOUT }) then
            q_at = now() - t0
          end
        end
        sleep(50*ms)
      end
    end)
    run(LIMIT)
    local bound = q_at and q_at + 5 * TIMEOUT + 3*s
    -- a client that moved onto a member with a slow disk may time out there as long as
    -- it stays, and a pinned policy rightly stays on a connected member: no claim for it
    -- (seed 1087: pinned_random from the killed n4 onto n1, slow_disks [1])
    local slow = {}
    for _, n in ipairs(world.cluster.slow_disks) do slow[n] = true end
    for i = 1, NC do
      local on_slow = slow[client(i):stats().last_node or 0]
      expect(not q_at or last[i] ~= target or on_slow or (first[i] ~= nil and first[i] < bound),
             "client " .. i .. " (" .. world.clients.balancers[i] .. ") fails over when the member it uses dies",
             { killed = target, failover_ms = first[i] and first[i] // ms, quorum_ms = q_at and q_at // ms,
               bound_ms = bound and bound // ms })
    end
    restart(target)
  end
end
run(1*s)

-- two configuration changes at once across a partition (Jepsen's member nemesis with
-- a partition; the single-server rule of Raft §4.1): on the seeds the swarm draws it for
-- (world.split_change), with five voters or more, the leader and one follower are cut
-- off from the others, the follower's answers to the leader are held, and the leader is
-- asked to remove all of the others but one at once. The others elect and commit. Then
-- the held answers come back while the sides are still apart: the leader must not have
-- accepted the second removal while the first was uncommitted, so its side has no
-- majority of any configuration it holds and commits nothing (raft_safety judges it).
if world.split_change then
  local A = run_until(function() return leader() ~= nil end, 10*s + 10*E) and leader()
  local vs = {}
  for _, n in ipairs(A and nodes() or {}) do
    local st = status(n)
    if n ~= A and st.alive and not st.removed and not st.learner then vs[#vs + 1] = n end
  end
  if #vs >= 4 then
    local f, rest = vs[1], {}
    for i = 2, #vs do rest[#rest + 1] = vs[i] end
    partition({ A, f }, rest)
    hold(f, A)
    local done = {}
    for i = 1, #rest - 1 do
      spawn(function() done[i] = { member_remove(rest[i]) } end)
    end
    run(4*s + 2 * E)
    release(f, A)
    run(4*s + 2 * E)
    local accepted = 0
    for i = 1, #rest - 1 do if done[i] and done[i][1] then accepted = accepted + 1 end end
    expect(accepted <= 1, "at most one of the removals asked at once is accepted",
           { leader = A, removals = #rest - 1, accepted = accepted })
    heal()
    run_until(function() return leader() ~= nil end, 10*s + 10*E)
    run(1*s)
  end
end

-- a promoted member votes before it has seen its promotion (etcd#10998): on the seeds
-- the swarm draws it for (world.promote_outage, 10%), a learner joins and catches up,
-- and is promoted while the leader's messages to it are held, so it still takes itself
-- for a learner; then the leader dies, and with it as many other voters as leave the
-- rest one vote short of a quorum. The promoted member's vote makes the quorum: a
-- leader is elected within ten election timeouts. (A refused add or promotion, a
-- learner that does not catch up, a leader that changed meanwhile: no claim.)
if world.promote_outage then
  local A = run_until(function() return leader() ~= nil end, 10*s + 10*E) and leader()
  local L = A and member_add { learner = true }
  local caught = L and run_until(function()
    local a, l = status(A), status(L)
    return a.alive and l.alive and l.last_index >= a.commit
  end, 10*s, 50*ms)
  if caught and leader() == A then
    hold(A, L) -- the promotion will not reach L
    local ok = member_promote(L)
    if ok and leader() == A and status(L).learner then
      local rest, nv = {}, 0
      for _, n in ipairs(nodes()) do
        local st = status(n)
        if not st.removed and (n == L or not st.learner) then nv = nv + 1 end
        if n ~= A and n ~= L and not st.removed and not st.learner and st.alive then
          rest[#rest + 1] = n
        end
      end
      local q = nv // 2 + 1 -- the voters' quorum, L among them
      local dead = { A }
      kill(A)
      release(A, L)
      if q >= 2 and #rest >= q - 1 then
        for i = #rest, q, -1 do -- rest[1..q-1] stay up: with L, a quorum
          kill(rest[i])
          dead[#dead + 1] = rest[i]
        end
        local t0 = now()
        local up = run_until(function() return leader() ~= nil end, 10 * E + 2*s)
        expect(up, "a leader with the vote of a member promoted while the leader's messages to it were held",
               { promoted = L, killed = dead, took_ms = (now() - t0) // ms })
      end
      for _, n in ipairs(dead) do restart(n) end
      run_until(function() return leader() ~= nil end, 10*s + 10*E)
      run(1*s)
    else
      release(A, L)
    end
  end
end

-- Raft's Figure 8 made on purpose (a figure-8 nemesis): on the seeds the swarm draws it
-- for (world.figure8, with 256 bytes of entries per message), (a) the leader, cut off,
-- takes three writes (each larger than a message) whose entries of its term reach
-- nobody, and dies once they are durable on it; (b) the first member another votes for
-- crashes at its next WAL save, after the fsync, before its messages: if it won, its
-- first entry is durable on it alone; (c) the old leader comes back first (its clock
-- twice as fast, the others' four times slower: they vote, but time out later) and
-- leads again: it sends its old-term suffix one entry per message, ahead of its
-- new-term entry. It must not count replicas of those entries toward a commit:
-- raft_safety's commit_electable judges each commit (the crashed member, whose entry
-- is of a newer term, could still be elected). Then every member comes back.
if world.figure8 then
  local A = run_until(function() return leader() ~= nil end, 10*s + 10*E) and leader()
  local vs = {}
  for _, n in ipairs(A and nodes() or {}) do
    local st = status(n)
    if n ~= A and st.alive and not st.removed and not st.learner then vs[#vs + 1] = n end
  end
  -- a leader the others follow (not one that lost them and has not heard yet)
  local followed = #vs >= 2 and run_until(function()
    if leader() ~= A then return false end
    for _, n in ipairs(vs) do if status(n).leader_node ~= A then return false end end
    return true
  end, 2 * E, 10*ms)
  if followed then
    if world.cluster.quota_bytes > 0 then nospace_recover() end -- room for its writes
    -- (a) its suffix reaches nobody; it dies once the suffix is durable on it
    local voter, durable, armed = {}, {}, nil
    for _, n in ipairs(vs) do voter[n] = true end
    on("persisted", function(ev) durable[ev.node] = ev.index end)
    -- (b) a member the others vote for (not a pre-vote) crashes at its next WAL save:
    -- if it won, that is its first entry's, durable on it alone
    on("vote_granted", function(ev)
      if not armed and not ev.pre and voter[ev.peer] then
        armed = ev.peer
        failpoint("raft/after_save", { node = ev.peer, action = "crash", count = 1 })
      end
    end)
    local base = status(A).last_index
    isolate(A)
    for i = 1, 3 do
      spawn(function() c:put("chaos/f8/" .. i, string.rep("x", 300), { node = A, timeout = TIMEOUT }) end)
    end
    run_until(function() return (durable[A] or 0) >= base + 3 end, E, 1*ms)
    kill(A)
    heal()
    run_until(function()
      if armed then return not status(armed).alive end
      return leader() ~= nil -- elected without a vote seen: nothing armed
    end, 10*E + 2*s, 1*ms)
    if armed then failpoint("raft/after_save", { node = armed, action = "off" }) end
    voter = {} -- no more arming
    -- (c) the old leader back first, leading again beside the newer entry: its clock
    -- fast, the others' slow (they vote, but time out later)
    restart(A)
    skew(A, 2.0)
    local slowed = {}
    for _, n in ipairs(vs) do
      if status(n).alive then skew(n, 0.25) slowed[#slowed + 1] = n end
    end
    run_until(function() return leader() ~= nil end, 10*E + 2*s, 1*ms)
    skew(A, 1.0)
    for _, n in ipairs(slowed) do skew(n, 1.0) end
    run(2 * E)
    for _, n in ipairs(vs) do if not status(n).alive then restart(n) end end
    run_until(function() return leader() ~= nil end, 10*s + 10*E)
    run(1*s)
  end
end

-- the last heal (a restart above) has its liveness window judged: a write within the
-- world's bound, not the end of the run one second later (6 'unknown' seeds of 201..1000)
run_until(put_ok, 10*s + 10*E, 100*ms)
run(1*s)
