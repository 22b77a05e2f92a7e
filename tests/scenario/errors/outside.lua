scenario{name="x", checks={"raft_safety"}}
table.sort({3,1,2}, function(a,b) sleep(1*ms) return a<b end)
