-- a client on both sides of a partition
scenario { name = "cnet-error", clients = { count = 2 } }
partition({ client(1), 2 }, { 3, client(1) })
