-- net.to neither a member nor a client
scenario { name = "cnet-error", clients = { count = 2 } }
net { delay_ms = 5, to = { 1, "c2" } }
