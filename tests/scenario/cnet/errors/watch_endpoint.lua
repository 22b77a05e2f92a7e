-- a watch is not a client
scenario { name = "cnet-error", clients = { count = 2 } }
partition({ client(1):watch("a") }, { 1 })
