-- restore-skips-tombstone.lua (bug mvcc.restore_skips_tombstone): a compaction at the
-- revision of a delete keeps that tombstone, so a watch opened at the compaction
-- revision still receives the delete; when the key's earlier revisions are compacted
-- away the tombstone is its first and only revision. Every member rebuilds its key
-- index when it restores its store (at a restart, or from a leader's snapshot). With
-- the bug (etcd#19179) that rebuild skips a tombstone met before any other revision of
-- its key, so after a restart the delete is gone. Each round puts and deletes a key,
-- compacts at the delete's revision, defragments every member (which saves its store)
-- and restarts them all, then opens a watch at the compaction revision. Asserted on
-- the events: the first one is the delete; the watch checker's "reliable" guarantee
-- judges every watch.
scenario {
  name = "restore-skips-tombstone",
  description = "delete, compact at it, defrag and restart every member, watch from it (bug: mvcc.restore_skips_tombstone)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 4 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
local missed, rounds = 0, 0
for round = 1, 2 do
  local key = "rt/k" .. round
  local p = c:put(key, "v" .. round)
  local d = c:delete(key)
  if p and d and d.deleted == 1 then
    local ok, err = compact(d.revision)
    expect(ok, "compaction at the delete's revision succeeds", err)
    run(300*ms)
    for _, n in ipairs(nodes()) do defrag(n) end -- each saves its store
    for _, n in ipairs(nodes()) do kill(n) end
    run(100*ms)
    for _, n in ipairs(nodes()) do restart(n) end
    expect(run_until(function() return leader() ~= nil end, 10*s), "a leader after the restart", leader())
    local w = client(1 + round % 3):watch("rt/", { prefix = true, start_rev = d.revision })
    c:put("rt/mark", tostring(round)) -- the watch reaches a later revision
    local ev = w:next(2*s)
    rounds = rounds + 1
    if not (ev and ev.type == "delete" and ev.key == key and ev.mod_revision == d.revision) then
      missed = missed + 1
    end
    while ev and ev.key ~= "rt/mark" do ev = w:next(2*s) end
    w:cancel()
  end
  run(500*ms)
end
expect(rounds >= 1, "a round wrote, deleted and compacted", rounds)
expect(missed == 0, "a watch from the compaction revision receives the delete sitting at it",
       { missed = missed, rounds = rounds })
heal_all()
run(1*s)
