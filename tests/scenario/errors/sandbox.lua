scenario{name="x", checks={"raft_safety"}}
local f = io.open("/etc/passwd")
