-- a link end that is neither a member nor a client
scenario { name = "cnet-error", clients = { count = 2 } }
hold(client(1), "n2")
