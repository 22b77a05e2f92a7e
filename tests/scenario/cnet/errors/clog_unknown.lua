-- an unknown member next to a client
scenario { name = "cnet-error", clients = { count = 2 } }
clog(client(1), 4)
