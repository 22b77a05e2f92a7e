-- A control call still waiting when the run ends (snapshot_save of a paused member
-- answers only after a resume that never comes): its context was leaked (LeakSanitizer,
-- lua fuzz target). The run ends normally; the ASan build checks for the leak.
scenario{ name = "ctl-pending-at-end", cluster = { nodes = 3 } }
run(1*s)
pause(2)
spawn(function() snapshot_save(2) end)
run(100*ms)
