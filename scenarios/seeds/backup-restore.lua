-- backup-restore.lua: etcd backups and `etcdutl snapshot restore`. A backup
-- (snapshot_save) carries a SHA-256 integrity hash that restore checks, so a corrupted
-- backup is refused; a raw copy of a member's db file has no hash and restores only
-- with skip_hash_check; a backup taken before defragmentation is larger than one taken
-- after compaction + defragmentation; a restore builds a new cluster (new cluster ID,
-- new member IDs) holding exactly the backup's data, so a member of the old cluster
-- that comes back cannot join it and cannot corrupt it. Asserted on the refusal texts,
-- the backup sizes, the identities each member reports (status), and the data read
-- back after each restore (the backup's keys, none of the old cluster's later writes,
-- new writes landing), under a workload; raft_safety
-- and converge judge the members. A restore rolls data and revision back on purpose, so
-- the client history across it is not one linearizable history: the linearizability
-- checker is left out and the data read back is asserted instead.
scenario {
  name = "backup-restore",
  description = "backup hash checked, corruption refused, raw copy needs skip_hash_check, smaller after defrag, restored cluster refuses a stale member",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 20, keys = 4 },
  checks   = { "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
-- a call that reaches the stale member times out (it has no leader): try the next one
local function get(key, opts)
  for _ = 1, 4 do
    local r = c:get(key, opts)
    if r then return r end
  end
end
local function put_all(prefix, n, value)
  local ok = 0
  for i = 1, n do if c:put(prefix .. i, value .. i) then ok = ok + 1 end end
  return ok
end
-- history: every key rewritten many times
for round = 1, 10 do put_all("bk/k", 20, "r" .. round .. "-" .. string.rep("v", 200)) end
local raw = copy_db(leader())
local before = snapshot_save(leader())
expect(before ~= nil, "a backup is taken", before)

-- integrity: a flipped byte is refused, a raw copy needs skip_hash_check
local r1, e1 = restore(before:corrupt()) -- etcdctl's "expected sha256 [..], got [..]"
expect(r1 == nil and tostring(e1):find("^expected sha256 %[[%d ]+%], got %[[%d ]+%]$") ~= nil,
       "a corrupted backup is refused", e1)
local r2, e2 = restore(raw)
expect(r2 == nil and e2 == "snapshot missing hash but --skip-hash-check=false",
       "a raw db copy is refused without skip_hash_check", e2)

-- a backup after compaction + defragmentation is smaller
local cur = c:put("bk/mark", "m")
local ok, err = compact(cur.revision)
expect(ok, "compaction succeeds", err)
for _, n in ipairs(nodes()) do defrag(n) end
local after = snapshot_save(leader())
expect(after:size() < before:size(), "a backup taken after compaction + defrag is smaller",
       { before = before:size(), after = after:size() })

-- the stale member: it keeps later writes of the old cluster, then goes down
local stale = 3
local rest = others(stale)
partition({ stale }, rest)
local late = put_all("bk/late", 10, "late")
heal()
run(2*s)
kill(stale)
expect(late > 0, "the old cluster took writes after the backup", late)

-- identities before the restore
local old_cluster = status(stale).cluster_id
local old_ids = {}
for _, n in ipairs(nodes()) do old_ids[status(n).member_id] = true end

-- restore the backup into the other two members; the stale member comes back
for _, n in ipairs(rest) do kill(n) end
local r3, e3 = restore(after, { nodes = rest })
expect(r3, "the backup restores into a new cluster", e3)
run_until(function() return leader() ~= nil end, 10*s)
restart(stale)
run(3*s)

-- the restored members form a new cluster: a new cluster ID, new member IDs; the
-- stale member keeps the old cluster's
local function identities(tag, prev_cluster)
  local a, b = status(rest[1]), status(rest[2])
  expect(a.cluster_id == b.cluster_id and a.cluster_id ~= old_cluster and a.cluster_id ~= prev_cluster
         and not old_ids[a.member_id] and not old_ids[b.member_id] and a.member_id ~= b.member_id
         and status(stale).cluster_id == old_cluster,
         tag .. ": new cluster ID and member IDs; the stale member keeps the old cluster ID",
         { old = old_cluster, new = a.cluster_id, stale = status(stale).cluster_id,
           members = { a.member_id, b.member_id } })
  return a.cluster_id
end
local first_cluster = identities("restored backup", old_cluster)

local function check(tag, want_value)
  local g = get("bk/", { prefix = true })
  local kept, lates = 0, 0
  for _, kv in ipairs(g and g.kvs or {}) do
    if kv.key:sub(1, 4) == "bk/k" and kv.value:sub(1, #want_value) == want_value then kept = kept + 1 end
    if kv.key:sub(1, 7) == "bk/late" then lates = lates + 1 end
  end
  expect(kept == 20 and lates == 0, tag .. ": the backup's data and none of the old cluster's later writes",
         { kept = kept, late = lates })
  local wrote = 0
  for i = 1, 6 do if c:put("bk/new" .. i, tag) then wrote = wrote + 1 end end
  expect(wrote >= 3, tag .. ": the restored cluster takes writes (the stale member does not)", wrote)
  local n = get("bk/new", { prefix = true })
  expect(n and n.count == wrote, tag .. ": new writes read back", n and n.count)
end
check("restored backup", "r10-v")

-- a raw db copy restores with skip_hash_check, again into a new cluster
for _, n in ipairs(rest) do kill(n) end
local r4, e4 = restore(raw, { nodes = rest, skip_hash_check = true })
expect(r4, "a raw db copy restores with skip_hash_check", e4)
run_until(function() return leader() ~= nil end, 10*s)
run(2*s)
identities("restored raw copy", first_cluster)
local gone = get("bk/new", { prefix = true })
expect(gone and gone.count == 0, "the raw copy predates the first restore's writes", gone and gone.count)
check("restored raw copy", "r10-v")
heal_all()
run(2*s)
