-- issue 12 item 20: prefix and range keys of any length (they were cut to 64 bytes in
-- txn and to 256 elsewhere, which widened the range).
scenario { name = "long-prefix", clients = { count = 1 } }
run_until(function() return leader() ~= nil end, 10 * s)
local c = client(1)
for _, len in ipairs({ 63, 64, 65, 100, 255, 256, 300, 1000 }) do
  local p = string.rep("p", len)
  c:put(p .. "a", "1")
  c:put(p .. "b", "2")
  c:put(string.rep("p", len - 1) .. "q", "outside") -- shares the first len-1 bytes only
  local g = c:get(p, { prefix = true })
  expect(g and g.count == 2, "get with a " .. len .. "-byte prefix sees 2 keys", g and g.count)
  local t = c:txn { success = { { get = { key = p, prefix = true } } } }
  local tc = t and t.responses[1].count
  expect(tc == 2, "txn get with a " .. len .. "-byte prefix sees 2 keys", tc)
  local d = c:txn { success = { { delete = { key = p, prefix = true } } } }
  expect(d and d.responses[1].deleted == 2, "txn delete with a " .. len .. "-byte prefix deletes 2",
         d and d.responses[1].deleted)
  c:put(p .. "c", "3")
  local w = c:watch(p, { prefix = true, start_rev = 1 })
  local seen = 0
  for ev in w:events(200 * ms) do
    if ev.key:sub(1, len) == p then seen = seen + 1 end
  end
  expect(seen == 5, "a watch with a " .. len .. "-byte prefix sees its 5 events", seen)
  w:cancel()
  local dd = c:delete(p, { prefix = true })
  expect(dd and dd.deleted == 1, "delete with a " .. len .. "-byte prefix", dd and dd.deleted)
end
-- success and failure lists of 32 operations each (the buffers of both were one array)
local many = {}
for i = 1, 32 do many[i] = { get = { key = string.rep("z", 80) .. i, prefix = true } } end
local r = c:txn { success = many, failure = many }
expect(r and #r.responses == 32, "32 prefix gets in a txn", r and #r.responses)
