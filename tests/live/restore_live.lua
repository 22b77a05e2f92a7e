-- restore_live.lua (live target, issue 16): copy_db and restore on our member
-- processes. copy_db(n) is the member's db image now (what snapshot_save wraps, without
-- the hash): a raw copy is refused by restore without skip_hash_check, a corrupted
-- backup with etcd's text. Restoring a backup into every member's data directory makes
-- a new cluster (new cluster ID and member IDs) with the backup's data and none of the
-- later writes, which takes writes; so does a raw copy with skip_hash_check.
scenario {
  name = "live-restore",
  description = "live target: copy_db, snapshot_save, restore into new data directories",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "watch" },
}

expect(run_until(function() return leader() ~= nil end, 10*s), "a leader is elected", leader())
local c = client(1)
for i = 1, 20 do c:put("rs/k" .. i, "v" .. i) end
local raw = copy_db(leader())
local bk = snapshot_save(leader())
expect(raw ~= nil and bk ~= nil and raw:size() > 0 and bk:size() > raw:size(),
       "copy_db and snapshot_save give the db image and a backup of it",
       { raw = raw and raw:size(), backup = bk and bk:size() })
local r1, e1 = restore(bk:corrupt())
expect(r1 == nil and tostring(e1):find("^expected sha256") ~= nil, "a corrupted backup is refused", e1)
local r2, e2 = restore(raw)
expect(r2 == nil and e2 == "snapshot missing hash but --skip-hash-check=false",
       "a raw copy is refused without skip_hash_check", e2)

for i = 1, 5 do c:put("rs/late" .. i, "x") end
local old = status(1).cluster_id
local all = nodes()
for _, n in ipairs(all) do kill(n) end
local r3, e3 = restore(bk, { nodes = all })
expect(r3, "the backup restores into every member", e3)
expect(run_until(function() return leader() ~= nil end, 15*s), "the restored cluster elects a leader",
       leader())
local function check(tag, prev)
  local a = status(leader())
  expect(a.cluster_id ~= nil and a.cluster_id ~= old and a.cluster_id ~= prev,
         tag .. ": a new cluster ID", { old = old, new = a.cluster_id })
  local g = c:get("rs/", { prefix = true })
  local k, late = 0, 0
  for _, kv in ipairs(g and g.kvs or {}) do
    if kv.key:sub(1, 4) == "rs/k" then k = k + 1 end
    if kv.key:sub(1, 7) == "rs/late" then late = late + 1 end
  end
  expect(k == 20 and late == 0, tag .. ": the backup's data, none of the later writes",
         { k = k, late = late })
  local w = c:put("rs/new", tag)
  expect(w ~= nil, tag .. ": the restored cluster takes writes", w)
  return a.cluster_id
end
local first = check("backup")
for _, n in ipairs(all) do kill(n) end
local r4, e4 = restore(raw, { nodes = all, skip_hash_check = true })
expect(r4, "a raw copy restores with skip_hash_check", e4)
expect(run_until(function() return leader() ~= nil end, 15*s), "it elects a leader", leader())
check("raw copy", first)
