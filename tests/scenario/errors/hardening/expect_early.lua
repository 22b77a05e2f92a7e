-- A script that ends with an error after one expect held: the expects after that line
-- never ran, so the expect check is 'unknown' (with the reason), never 'pass'.
scenario { name = "expect_early" }
expect(true, "reached before the error")
run(-1)
expect(false, "never reached")
