-- txn-drops-ranges.lua (bug server.txn_drops_ranges): every member applies a txn the
-- same way, reads included, because a read can decide the outcome: a range at a
-- compacted revision fails the whole txn ("required revision has been compacted") and
-- nothing of it is written. With the bug (etcd#18667) a member that has no client
-- waiting for the txn drops its range operations before applying it (they produce
-- results nobody reads), so on those members the txn's put succeeds while the member
-- that proposed it, and answered the client, fails it. Here a txn writes a key and
-- reads another at a compacted revision; then every member is asked for the key.
-- Caught by the expect that all members hold the same value and that it is the one
-- before the failed txn, by linearizability (a linearizable read sees a value only a
-- failed txn wrote) and by converge (members' KV hashes differ).
scenario {
  name = "txn-drops-ranges",
  description = "a txn reading a compacted revision fails on the proposer only (bug: server.txn_drops_ranges)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 4 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local failed, rounds = 0, 0
for round = 1, 3 do
  local k1, k2 = "tr/a" .. round, "tr/b" .. round
  local p1 = c:put(k1, "old")
  c:put(k2, "before")
  local p3 = c:put(k1, "new")
  if p1 and p3 then
    local ok, err = compact(p3.revision)
    expect(ok, "compaction succeeds", err)
    run(300*ms)
    -- through the round-robin client: each round another member proposes
    local r, terr = client(1 + round % 3):txn {
      success = { { put = { key = k2, value = "after" } }, { get = { key = k1, revision = p1.revision } } },
    }
    rounds = rounds + 1
    expect(r == nil and terr ~= nil and terr:find("compacted") ~= nil,
           "a txn reading a compacted revision fails", { result = r, err = terr })
    run(300*ms)
    for _, n in ipairs(nodes()) do
      local g = c:get(k2, { node = n, serializable = true })
      if not (g and g.value == "before") then failed = failed + 1 end
    end
  end
end
expect(rounds >= 2, "most rounds ran", rounds)
expect(failed == 0, "no member applied the failed txn's write", { members_with_it = failed })
heal_all()
run(2*s)
