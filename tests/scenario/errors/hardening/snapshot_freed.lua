-- issue 12 item 3 (--unsafe-lua, where debug reaches the metatable): a snapshot whose
-- __gc ran raises when used instead of reading freed memory.
scenario { name = "x" }
run(2 * s)
local snap = copy_db(1)
debug.getmetatable(snap).__gc(snap)
expect(tostring(snap) == "<snapshot (freed)>", "tostring says it was freed", tostring(snap))
local ok, err = pcall(snap.corrupt, snap)
expect(not ok and err:find("this snapshot was freed", 1, true), "corrupt() refuses it", err)
ok, err = pcall(restore, snap, { skip_hash_check = true })
expect(not ok and err:find("this snapshot was freed", 1, true), "restore() refuses it", err)
snap:size()
