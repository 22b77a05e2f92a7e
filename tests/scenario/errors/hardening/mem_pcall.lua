-- issue 12 item 5: a memory error cannot be caught by pcall (or xpcall).
scenario { name = "x" }
local t = {}
local function grow() while true do t[#t + 1] = string.rep("x", 1000) .. #t end end
while true do
  xpcall(function() pcall(grow) end, function(e) return e end)
  t = {}
end
