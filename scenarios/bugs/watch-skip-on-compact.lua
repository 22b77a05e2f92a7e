-- watch-skip-on-compact.lua (bug mvcc.watch_skip_on_compact): compaction keeps a
-- tombstone that sits exactly at the compaction revision, so a watch that starts at
-- that revision (the oldest one still allowed) still receives the delete. With the bug
-- (etcd#18089 / #19179) a watch catching up over the compacted history drops that
-- delete event. Each round deletes a key, compacts at the delete's revision under a
-- workload, opens a watch from that revision and writes one more key: asserts on the
-- events received that the first one is the delete at that revision; the watch
-- checker's "reliable" guarantee judges every watch against the acknowledged writes
-- (the later write makes the watch reach past the delete).
scenario {
  name = "watch-skip-on-compact",
  description = "delete, compact at its revision, watch from it: the delete is delivered (bug: mvcc.watch_skip_on_compact)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 40, keys = 6, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local missed, rounds = 0, 0
for round = 1, 4 do
  local key = "skip/k" .. round
  local p = c:put(key, "v" .. round)
  local d = c:delete(key)
  if p and d and d.deleted == 1 then
    local ok, err = compact(d.revision)
    expect(ok, "compaction at the delete's revision succeeds", err)
    run(300*ms) -- every member applied it
    local w = client(1 + round % 3):watch("skip/", { prefix = true, start_rev = d.revision })
    c:put("skip/mark", tostring(round)) -- the watch reaches a later revision
    local ev = w:next(2*s)
    rounds = rounds + 1
    if not (ev and ev.type == "delete" and ev.key == key and ev.mod_revision == d.revision) then
      missed = missed + 1
    end
    local mark = ev
    while mark and mark.key ~= "skip/mark" do mark = w:next(2*s) end
    w:cancel()
  end
  run(500*ms)
end
expect(rounds >= 3, "most rounds wrote, deleted and compacted", rounds)
expect(missed == 0, "a watch from the compaction revision receives the delete sitting at it",
       { missed = missed, rounds = rounds })
heal_all()
run(1*s)
