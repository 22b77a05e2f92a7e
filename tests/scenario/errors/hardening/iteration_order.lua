-- issue 12 item 11: every order a script can see is the same in every process (Lua's
-- string hash is seeded per process). The keys are written through a client, in the
-- order next/pairs give them, so a different order is a different digest.
scenario { name = "iteration-order", clients = { count = 1 } }
local t = {}
for i = 1, 40 do t["key" .. i] = i end
t[7] = "seven"; t[2.5] = "two and a half"; t[true] = "yes"
local c = client(1)
local order = {}
for k in next, t do order[#order + 1] = tostring(k) end
c:put("next-order", table.concat(order, ","))
expect(order[1] == "2.5" and order[2] == "7" and order[3] == "key1" and order[#order] == "true",
       "next visits numbers, then strings by bytes, then booleans", order)
local via_pairs = {}
for k in pairs(t) do via_pairs[#via_pairs + 1] = tostring(k) end
expect(table.concat(via_pairs, ",") == table.concat(order, ","), "pairs and next agree")
-- next(t, k) from any key, and a removal during the walk
local k, n = next(t), 0
while k ~= nil do
  n = n + 1
  if type(k) == "string" and k:sub(-1) == "3" then t[k] = nil end
  k = next(t, k)
end
expect(n == 43, "every key visited once despite removals", n)
local left = {}
for kk in pairs(t) do left[#left + 1] = tostring(kk) end
c:put("after-removal", table.concat(left, ","))
expect(next({}) == nil, "next of an empty table is nil")
local ok, err = pcall(next, { [{}] = 1 })
expect(not ok and err:find("no deterministic order", 1, true), "a table key is refused", err)
-- a put per key, in iteration order: the history (and so the digest) shows the order
for kk, v in pairs(t) do c:put("k/" .. tostring(kk), tostring(v)) end
