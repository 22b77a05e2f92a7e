scenario{name="x", checks={"raft_safety"}}
run(1*s)
local t = nil
print(t.x)
