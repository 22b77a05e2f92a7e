-- net{} with an empty side
scenario { name = "cnet-error", clients = { count = 2 } }
net { drop = 0.1, from = {} }
