-- issue 12 item 6: an endless loop in a spawned coroutine.
scenario { name = "x" }
spawn(function() local i = 0; while true do i = i + 1 end end)
run(1 * s)
