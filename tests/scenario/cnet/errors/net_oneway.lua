-- net{} oneway without from or to
scenario { name = "cnet-error", clients = { count = 2 } }
net { delay_ms = 5, oneway = true }
