scenario{name="x", checks={"raft_safety", "linearizability"}, workload={rate=50}}
run(1*s)
expect(1 == 2, "one is two", {a=1})
run(1*s)
expect(true, "still running after a failed expect")
