-- api_time.lua: time, coroutines and the sandbox helpers.
scenario { name = "api-time", description = "time, spawn, run_until, sandbox helpers",
           cluster = { nodes = 3 }, clients = { count = 1 }, checks = { "raft_safety" } }
expect(ns == 1 and us == 1000 and ms == 1000000 and s == 1000000000, "time constants")
local t0 = now()
run(100*ms)
expect(now() == t0 + 100*ms, "run advances simulated time exactly", now() - t0)
local woke = {}
spawn(function(tag) sleep(50*ms); woke[#woke + 1] = tag end, "a")
spawn(function(tag) sleep(20*ms); woke[#woke + 1] = tag end, "b")
run(100*ms)
expect(woke[1] == "b" and woke[2] == "a", "spawned coroutines wake in time order", woke)
local ok = run_until(function() return leader() ~= nil end, 10*s)
expect(ok, "run_until sees a leader", leader())
local never = run_until(function() return false end, 200*ms, 50*ms)
expect(never == false, "run_until gives up at its limit")
math.randomseed(7)
local a = { math.random(), math.random(10), math.random(5, 6) }
math.randomseed(7)
local b = { math.random(), math.random(10), math.random(5, 6) }
expect(a[1] == b[1] and a[2] == b[2] and a[3] == b[3], "randomseed replays the stream", a)
expect(a[2] >= 1 and a[2] <= 10 and a[3] >= 5 and a[3] <= 6, "random ranges", a)
local keys = {}
for k in sorted_pairs({ zeta = 1, alpha = 2, [3] = 3, mid = 4 }) do keys[#keys + 1] = tostring(k) end
expect(table.concat(keys, ",") == "3,alpha,mid,zeta", "sorted_pairs order", keys)
local order = {}
for k in pairs({ b = 1, a = 2, c = 3 }) do order[#order + 1] = k end
expect(table.concat(order) == "abc", "pairs is sorted in the sandbox", order)
local arr = { {k = 2, v = "x"}, {k = 1, v = "y"}, {k = 2, v = "z"} }
table.sort(arr, function(p, q) return p.k < q.k end)
expect(arr[2].v == "x" and arr[3].v == "z", "table.sort is stable", arr)
expect(os == nil and io == nil and debug == nil and require == nil, "sandbox removes os/io/debug")
expect(not tostring({}):find("0x"), "tostring shows no address", tostring({}))
print("api_time: print goes to stderr")
