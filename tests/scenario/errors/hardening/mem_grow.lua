-- issue 12 item 5: a table that grows without end meets --lua-mem-mb.
scenario { name = "x" }
local t = {}
while true do t[#t + 1] = { #t } end
