-- a client listed twice in net.from
scenario { name = "cnet-error", clients = { count = 2 } }
net { delay_ms = 5, from = { client(1), client(1) } }
