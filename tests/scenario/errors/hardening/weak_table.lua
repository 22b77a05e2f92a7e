-- A weak table's content depends on when the collector runs: refused like __gc.
scenario { name = "weak" }
local cache = setmetatable({}, { __mode = "k" })
