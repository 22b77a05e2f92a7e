scenario{name="x"}
client(1):lease_keepalive(1, { bogus = true })
