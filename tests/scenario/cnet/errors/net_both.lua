-- a client on both sides of net{}
scenario { name = "cnet-error", clients = { count = 2 } }
net { delay_ms = 5, from = client(1), to = { 2, client(1) } }
