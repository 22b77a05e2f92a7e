scenario{name="x"}
local x = = 1
