-- issue 12 item 6: stuck inside one C call (a pattern that backtracks for ages), where
-- no hook runs: the watchdog ends the process.
scenario { name = "x" }
run(1 * s)
local subject = string.rep("a", 5000)
string.find(subject, string.rep(".-", 16) .. "b")
