scenario{name="x", checks={"raft_safety"}}
kill(7)
