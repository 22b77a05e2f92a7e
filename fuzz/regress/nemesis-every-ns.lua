-- Found by fuzz/fuzz_lua.c: a nemesis ticking every 1.5 ns applied a fault per event
-- of the simulation, so simulated time barely moved and the run never ended. A tick
-- below 1 ms is now a script error (exit 2, this file and line).
scenario{ name = "nemesis-every-ns", clients = { count = 1 } }
run(200*ms)
nemesis{ kinds = { "net" }, every = 1.5, duration = 300*ms }
run(1*s)
