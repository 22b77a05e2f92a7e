-- backup.lua (etcd target): snapshot_save streams etcd's Maintenance Snapshot (db plus
-- its SHA-256), copy_db reads a member's db file, and restore runs `etcdctl snapshot
-- restore` into new data directories: a corrupted backup and a raw copy without
-- skip_hash_check are refused in etcdctl's words; a restore of every member makes a new
-- cluster (new cluster ID and member IDs) holding exactly the backup's keys; converge
-- then compares the members' HashKV.
scenario {
  name = "etcd-backup",
  cluster  = { nodes = 3 },
  clients  = { count = 1, timeout_ms = 2000 },
  checks   = { "converge" },
}
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local function put(k, v)
  for _ = 1, 3 do if c:put(k, v, { timeout = 5*s }) then return true end end
  return false
end
for i = 1, 5 do expect(put("b/k" .. i, "v" .. i), "put before the backup " .. i) end
local snap = snapshot_save(leader())
expect(snap ~= nil and snap:size() > 32 and (snap:size() - 32) % 4096 == 0,
       "a backup is etcd's db (pages of 4 KiB) and a 32-byte SHA-256", snap and snap:size())
local raw = copy_db(leader())
expect(raw ~= nil and raw:size() % 4096 == 0, "a raw copy is the db file alone", raw and raw:size())
local r1, e1 = restore(snap:corrupt())
expect(r1 == nil and tostring(e1):find("^expected sha256 %[") ~= nil,
       "a corrupted backup is refused by etcdctl", e1)
local r2, e2 = restore(raw)
expect(r2 == nil and e2 == "snapshot missing hash but --skip-hash-check=false",
       "a raw copy is refused without skip_hash_check", e2)
expect(leader() ~= nil, "a refused restore touches no member")
expect(put("b/late", "x"), "a write after the backup")
local old = status(1)
local r3, e3 = restore(snap)
expect(r3, "the backup restores into every member", e3)
run_until(function() return leader() ~= nil end, 10*s)
local new = status(1)
expect(new.cluster_id ~= old.cluster_id and new.member_id ~= old.member_id,
       "a new cluster ID and new member IDs",
       { old = { old.cluster_id, old.member_id }, new = { new.cluster_id, new.member_id } })
local g
for _ = 1, 3 do g = c:get("b/", { prefix = true, timeout = 5*s }); if g then break end end
expect(g ~= nil and g.count == 5, "exactly the backup's keys come back", g and g.count)
expect(put("b/after", "y"), "the restored cluster takes writes")
