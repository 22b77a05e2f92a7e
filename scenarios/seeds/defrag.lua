-- defrag.lua: etcd's backend and defragmentation. The db file grows with every write;
-- compaction frees pages inside it but the file keeps its size; defragmentation
-- rewrites it to the live data, and while it runs the member serves nothing: reads
-- and writes that reach it wait until it ends, for a time that grows with the size.
-- Asserted on the db file sizes (copy_db) before and after compaction and after
-- defragmentation, on the duration of each defrag call, and on the return times of
-- reads and writes that reached the member during its defragmentation (never before
-- its end), under a workload; plus all four checkers.
scenario {
  name = "defrag",
  description = "compaction keeps the file size, defrag shrinks it and blocks the member meanwhile",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 3000 },
  workload = { rate = 30, keys = 6, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)
local big = string.rep("d", 2500)
local last
for i = 1, 1500 do
  local r = c:put("frag/" .. (i % 10), big .. i)
  if r then last = r.revision end
end
run(500*ms)
local n1, n2 = nodes()[1], nodes()[2]
local grown = copy_db(n1):size()
expect(grown > 3000000, "the db file grew with the writes", grown)

-- compaction does not shrink the file
local ok, err = compact(last)
expect(ok, "compaction succeeds", err)
run(500*ms)
local compacted = copy_db(n1):size()
expect(compacted >= grown, "compaction leaves the file size", { before = grown, after = compacted })

-- defragment n1 while every client keeps reading and writing
local calls = {}
local busy = true
for i = 1, 3 do
  spawn(function()
    local k = 0
    while busy do
      k = k + 1
      local t0 = now()
      local r
      if k % 2 == 0 then r = client(i):get("frag/1") else r = client(i):put("frag/w" .. i, tostring(k)) end
      if r then calls[#calls + 1] = { node = r.node, call = t0, ret = now() } end
      sleep(3*ms)
    end
  end)
end
sleep(20*ms)
local t0 = now()
local d1, derr = defrag(n1)
local t1 = now()
busy = false
expect(d1, "defragmentation succeeds", derr)
run(500*ms) -- calls still in flight return
local shrunk = copy_db(n1):size()
expect(shrunk < compacted / 10, "defragmentation shrinks the file to the live data",
       { before = compacted, after = shrunk })
local waited, overlapped = 0, 0
for _, cl in ipairs(calls) do
  if cl.node == n1 and cl.call > t0 and cl.call < t1 then
    overlapped = overlapped + 1
    if cl.ret >= t1 then waited = waited + 1 end
  end
end
expect(overlapped > 0, "some reads and writes reached the member while it defragmented", overlapped)
expect(waited == overlapped, "every one of them waited for the defragmentation to end",
       { overlapped = overlapped, waited = waited, blocked_ms = (t1 - t0) // ms })

-- the block lasts longer for a bigger file: n2 still has the big file, then a small one
local t2 = now()
defrag(n2)
local big_ms = now() - t2
local t3 = now()
defrag(n2)
local small_ms = now() - t3
expect(big_ms > small_ms, "a defragmentation of a bigger file blocks longer",
       { big_ms = big_ms // ms, small_ms = small_ms // ms })
local g = c:get("frag/3")
expect(g and g.value:sub(1, 2500) == big, "the data survives defragmentation", g and #g.value)
heal_all()
run(1*s)
