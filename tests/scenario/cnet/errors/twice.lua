-- a client listed twice on one side
scenario { name = "cnet-error", clients = { count = 2 } }
partition({ client(2), client(2) })
