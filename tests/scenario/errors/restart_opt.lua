scenario { name = "restart-opt" }
restart(1, { bogus = true })
