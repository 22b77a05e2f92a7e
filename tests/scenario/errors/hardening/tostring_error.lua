-- issue 12 item 2: an error object whose __tostring raises (a Lua panic before).
scenario { name = "x" }
error(setmetatable({}, { __tostring = function() error("inner") end }))
