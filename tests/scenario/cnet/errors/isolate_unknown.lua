-- isolate of an unknown member
scenario { name = "cnet-error", clients = { count = 2 } }
isolate(7)
