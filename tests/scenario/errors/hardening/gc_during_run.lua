-- issue 12 item 1 (--unsafe-lua): a finalizer run by the collector during the run gets
-- an error from every API call, so it cannot act on the world.
scenario { name = "gc-during-run" }
run(1 * s)
local ran = 0
setmetatable({}, { __gc = function() ran = ran + 1; kill(1) end })
collectgarbage()
collectgarbage()
expect(ran == 1, "the finalizer ran", ran)
expect(#node_events { kind = "crash" } == 0, "its kill(1) did nothing", #node_events { kind = "crash" })
expect(status(1).alive, "member 1 is alive")
