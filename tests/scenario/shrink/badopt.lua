shrink{ skip_faults = {1}, bogus = 2 }; scenario { name = "shrink-badopt" }
