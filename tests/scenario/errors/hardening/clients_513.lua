-- clients.count above the cap of 512: a clear error naming the line, exit 2
scenario { name = "clients_513",
  clients = { count = 513 } }
run(1*s)
