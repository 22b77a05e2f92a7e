scenario{name="x", checks={"raft_safety"}}
bug("no.such_bug")
