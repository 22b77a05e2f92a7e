-- Messages: name the real problem with a node id.
scenario { name = "node-args" }
run(1 * s)
local function says(what, want, fn, ...)
  local ok, err = pcall(fn, ...)
  expect(not ok and err:find(want, 1, true), what, err)
end
says("a duplicate in a partition", "node 1 is listed twice (positions 1 and 2)", partition, { 1, 1, 1, 1 })
says("a duplicate in the other side", "node 2 is listed twice", partition, { 1 }, { 2, 3, 2 })
says("2^63 is out of range", "node id 9.2233720368548e+18 out of range", kill, 2^63)
says("math.maxinteger is out of range", "node id 9223372036854775807 out of range", kill, math.maxinteger)
says("0 is out of range", "node id 0 out of range", pause, 0)
says("1.5 is not an integer", "node id must be an integer, got 1.5", kill, 1.5)
says("a string is not a node id", "node id expected, got string", kill, "1")
says("an unknown node", "unknown node id 9 (nodes are: 1, 2, 3)", kill, 9)
says("an unknown node in a list", "unknown node id 9 (nodes are: 1, 2, 3) at position 2", others, { 1, 9 })
says("a string in a list", "node id expected, got string at position 1", partition, { "1" })
says("restore to a node twice", "node 2 is listed twice", restore, copy_db(1), { nodes = { 2, 2 }, skip_hash_check = true })
