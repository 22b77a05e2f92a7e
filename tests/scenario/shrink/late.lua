scenario { name = "shrink-late" }
run(1*s)
shrink{ clients = 1 }
