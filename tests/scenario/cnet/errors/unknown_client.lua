-- a client the scenario does not have
scenario { name = "cnet-error", clients = { count = 2 } }
partition({ client(3) }, { 1 })
