-- issue 12 item 3: the runtime's userdata metatables are protected.
scenario { name = "x" }
run(2 * s)
local s1 = copy_db(1)
expect(getmetatable(s1) == false, "a snapshot's metatable is protected")
expect(getmetatable(client(1)) == false, "a client's metatable is protected")
expect(getmetatable(client(1):watch("k")) == false, "a watch's metatable is protected")
expect(not pcall(setmetatable, client(1), {}), "setmetatable on a userdata is refused")
getmetatable(s1).__gc(s1)
restore(s1, { skip_hash_check = true })
