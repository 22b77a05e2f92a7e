-- issue 12 item 12, as reported: run(math.maxinteger - 10) overflowed the clock
-- (UBSan at scn_core.c:103) and returned at once.
scenario { name = "x" }
run(math.maxinteger - 10)
