scenario { name = "b", clients = { count = 3, balancers = { "round_robin", "health_aware" } } }
