-- watch-leader-change.lua: etcd watches survive leader changes and member restarts.
-- A watch lives on one member; when the leader changes nothing happens to it, and when
-- its member dies the client re-opens it elsewhere from the last revision it received
-- + 1, so the application sees every change exactly once, in revision order. Under a
-- write load (the workload plus a writer of our own), the leader is killed, moved and
-- cut off, and followers restart, while watches opened from every client (so on every
-- member) keep running. Asserts on the events received: for every watch, every write
-- of our own writer that was acknowledged, in the range and revision window the watch
-- covered, arrived exactly once and revisions never went back; the watch checker must
-- pass its nine guarantees (no gap, no duplicate, ...), the other checkers too.
scenario {
  name = "watch-leader-change",
  description = "watches across leader kill, transfer, isolation and member restarts: no gap, no duplicate",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 80, keys = 8, watchers = 2 },
  checks   = { "linearizability", "watch", "raft_safety", "converge", "liveness" },
}

run_until(function() return leader() ~= nil end, 10*s)

-- watches from every client; each remembers the revisions it saw per key
local watches = {}
for i = 1, 3 do
  for j = 1, 2 do
    local w = { seen = {}, dup = 0, back = 0, last = 0, first = nil }
    client(i):watch("wlc/", { prefix = true, prev_kv = true, start_rev = 0, callback = function(ev)
      local id = ev.key .. "@" .. ev.mod_revision
      if w.seen[id] then w.dup = w.dup + 1 end
      w.seen[id] = true
      if ev.mod_revision < w.last then w.back = w.back + 1 end
      w.last = math.max(w.last, ev.mod_revision)
      w.first = w.first or ev.mod_revision
    end })
    watches[#watches + 1] = w
  end
end

-- our own writer: remembers every acknowledged write
local acked, writing = {}, true
spawn(function()
  local c, n = client(1), 0
  while writing do
    n = n + 1
    local key = "wlc/k" .. (n % 5)
    local r = c:put(key, "v" .. n)
    if r then acked[#acked + 1] = { key = key, rev = r.revision } end
    sleep(30*ms)
  end
end)
run(2*s)

-- 1. the leader dies and comes back
local l = leader()
kill(l)
run_until(function() local n = leader(); return n ~= nil and n ~= l end, 10*s)
run(1*s)
restart(l)
run(2*s)
-- 2. leadership is transferred
local ok, err = move_leader(others(leader())[1])
expect(ok, "leadership moves", err)
run(2*s)
-- 3. the leader is cut off; the majority elects another
l = leader()
isolate(l)
run_until(function() local n = leader(); return n ~= nil and n ~= l end, 10*s)
run(2*s)
heal()
run(2*s)
-- 4. each follower restarts in turn
for _, n in ipairs(others(leader())) do
  kill(n)
  run(1*s)
  restart(n)
  run(2*s)
end
writing = false
run(3*s)

expect(#acked > 100, "our writer kept writing through the faults", #acked)
local missing, dups, back = 0, 0, 0
for _, w in ipairs(watches) do
  dups = dups + w.dup
  back = back + w.back
  for _, a in ipairs(acked) do
    if w.first and a.rev >= w.first and a.rev <= w.last and not w.seen[a.key .. "@" .. a.rev] then
      missing = missing + 1
    end
  end
end
expect(missing == 0, "every acknowledged write in a watch's window reached it", missing)
expect(dups == 0, "no watch received an event twice", dups)
expect(back == 0, "no watch went back in revisions", back)
local covered = 0
for _, w in ipairs(watches) do
  if w.first and w.last >= acked[#acked].rev then covered = covered + 1 end
end
expect(covered == #watches, "every watch reached the last write", covered)
heal_all()
run(1*s)
