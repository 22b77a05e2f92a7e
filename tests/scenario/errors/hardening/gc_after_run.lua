-- issue 12 item 1: a finalizer that calls the API once the world is gone. The sandbox
-- has no finalizers: setmetatable refuses __gc (with --unsafe-lua the call is refused
-- at run time instead, and the run passes).
scenario { name = "gc-after-run" }
run(1 * s)
setmetatable({}, { __gc = function() kill(1); now(); spawn(function() end); client(1):put("a", "b") end })
