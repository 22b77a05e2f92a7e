scenario{name="x", checks={"raft_safety"}}
kill("one")
