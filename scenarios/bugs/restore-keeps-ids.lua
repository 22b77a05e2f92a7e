-- restore-keeps-ids.lua (bug server.restore_keeps_ids): `etcdutl snapshot restore`
-- gives the restored cluster a new cluster ID and new member IDs, so a member of the
-- old cluster that comes back (here one that had fallen behind and was down during the
-- restore) is refused by the restored members ("etcdserver: cluster ID mismatch")
-- instead of rejoining them. With the bug the restore keeps the old identities: the
-- stale member is taken for a peer, its divergent log meets the restored one and the
-- cluster is corrupted. Asserts on the identities the restored members report
-- (status: a new cluster ID, new member IDs) and on the data read back from the
-- restored cluster (the backup's keys are there, later writes to the old cluster are
-- not, new writes land and read back), and lets raft_safety and converge judge the
-- members (with the bug, raft_safety stops the run as the stale member rejoins). A restore rolls the
-- data and the revision back to the backup on purpose, so the client history across it
-- is not one linearizable history: the linearizability checker is left out and the
-- data read back after the restore is asserted instead.
scenario {
  name = "restore-keeps-ids",
  description = "restore into two members, a stale old member returns: refused (bug: server.restore_keeps_ids)",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 2, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 0 },
  checks   = { "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
for i = 1, 20 do c:put("restore/k" .. i, "v" .. i) end
local l = leader()
local snap = snapshot_save(l)
expect(snap ~= nil and snap:size() > 0, "a backup is taken", snap and snap:size())

-- the stale member: it keeps the old cluster's later writes in its log, then goes down
local stale = 3
partition({ stale }, others(stale))
for i = 21, 30 do c:put("restore/k" .. i, "lost" .. i) end
heal()
run(2*s)
kill(stale)
for i = 31, 40 do c:put("restore/k" .. i, "lost" .. i) end

-- restore the backup into the two other members, then the old member comes back
local rest = others(stale)
local old_cluster = status(rest[1]).cluster_id
local old_ids = {}
for _, n in ipairs(nodes()) do old_ids[status(n).member_id] = true end
for _, n in ipairs(rest) do kill(n) end
local ok, err = restore(snap, { nodes = rest })
expect(ok, "the backup restores", err)
run_until(function() return leader() ~= nil end, 10*s)
local a, b = status(rest[1]), status(rest[2])
expect(a.cluster_id ~= old_cluster and b.cluster_id == a.cluster_id and not old_ids[a.member_id]
       and not old_ids[b.member_id], "the restored members report a new cluster ID and new member IDs",
       { old = old_cluster, new = { a.cluster_id, b.cluster_id }, members = { a.member_id, b.member_id } })
restart(stale)
run(3*s)

local wrote = 0
for i = 41, 50 do
  if c:put("restore/k" .. i, "new" .. i) then wrote = wrote + 1 end
end
-- (writes sent to the stale member time out: it has no leader in its old cluster)
expect(wrote >= 3, "the restored cluster takes writes", wrote)
run(2*s)
local r = c:get("restore/k", { range_end = "restore/l", serializable = false })
local kept, lost, new = 0, 0, 0
for _, kv in ipairs(r and r.kvs or {}) do
  if kv.value:sub(1, 1) == "v" then kept = kept + 1
  elseif kv.value:sub(1, 4) == "lost" then lost = lost + 1
  elseif kv.value:sub(1, 3) == "new" then new = new + 1 end
end
expect(kept == 20 and lost == 0 and new == wrote,
       "the restored cluster holds the backup and the new writes, nothing of the old cluster's later writes",
       { kept = kept, lost = lost, new = new })
