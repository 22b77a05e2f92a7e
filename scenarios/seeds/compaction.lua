-- compaction.lua: etcd's manual compaction. compact(C) drops every key revision
-- below C (each key keeps its newest revision at or below C); from then on every
-- member refuses reads below C with "etcdserver: mvcc: required revision has been
-- compacted" (also inside a txn), and a watch starting below C is cancelled with that
-- text and the compact revision C; reads and watches at C and above work; compacting
-- again at or below C, or above the current revision, is refused with etcd's texts.
-- Asserted on the values, error texts and revisions read back, on every member (a
-- restarted one too), under a workload; plus all four checkers (the compaction is in
-- the history, so the linearizability checker judges the compacted reads too).
scenario {
  name = "compaction",
  description = "manual compaction: reads and watches below it fail with etcd's texts, at and above it work",
  cluster  = { nodes = 3, election_ms = 1000, heartbeat_ms = 100 },
  clients  = { count = 3, balancer = "round_robin", timeout_ms = 2000 },
  workload = { rate = 40, keys = 6, watchers = 1 },
  checks   = { "linearizability", "watch", "raft_safety", "converge" },
}

local COMPACTED = "etcdserver: mvcc: required revision has been compacted"
local FUTURE = "etcdserver: mvcc: required revision is a future revision"
run_until(function() return leader() ~= nil end, 10*s)
local c = client(1)

-- history: cmp/a written ten times; remember the revision of each value
local rev = {}
for i = 1, 10 do
  local r = c:put("cmp/a", "v" .. i)
  rev[i] = r and r.revision
end
local C = rev[6]
local ok, err = compact(C)
expect(ok, "compaction succeeds", err)
run(300*ms) -- every member applied it

-- below C: refused on every member (round robin: nine reads cover the three)
local refused, wrong = 0, nil
for i = 1, 3 do
  for j = 1, 3 do
    local r, e = client(i):get("cmp/a", { revision = rev[5] })
    if r == nil and e == COMPACTED then refused = refused + 1 else wrong = e or (r and r.value) end
  end
end
expect(refused == 9, "a read below the compacted revision fails with etcd's text on every member",
       { refused = refused, other = wrong })
local t, te = c:txn { success = {{ get = { key = "cmp/a", revision = rev[2] } }} }
expect(t == nil and te == COMPACTED, "a txn reading below the compacted revision fails", te)

-- at C and above: the history is still there
local at = c:get("cmp/a", { revision = C })
expect(at and at.value == "v6" and at.kvs[1].mod_revision == C, "a read at the compacted revision works",
       at and at.kvs[1])
local later = c:get("cmp/a", { revision = rev[8] })
expect(later and later.value == "v8", "a read above the compacted revision works", later and later.value)
local now_v = c:get("cmp/a")
expect(now_v and now_v.value == "v10" and now_v.kvs[1].version == 10,
       "the current value and version are untouched", now_v and now_v.kvs[1])

-- watches: below C cancelled with the compact revision; at C they replay from C
local w1 = c:watch("cmp/", { prefix = true, start_rev = rev[3] })
local ev, why, reason, crev = w1:next(2*s)
expect(ev == nil and why == "canceled" and reason == COMPACTED and crev == C,
       "a watch from below the compacted revision is cancelled with etcd's text and the revision",
       { why = why, reason = reason, compact_revision = crev })
local w2 = c:watch("cmp/", { prefix = true, start_rev = C })
local got = {}
for e in w2:events(1*s) do got[#got + 1] = e.value end
expect(#got == 5 and got[1] == "v6" and got[5] == "v10", "a watch from the compacted revision replays from it",
       got)
w2:cancel()

-- compaction refusals
local r1, e1 = compact(C)
expect(r1 == nil and e1 == COMPACTED, "compacting again at the same revision is refused", e1)
local r2, e2 = compact(rev[10] + 100000)
expect(r2 == nil and e2 == FUTURE, "compacting a future revision is refused", e2)
local f, fe = c:get("cmp/a", { revision = rev[10] + 100000 })
expect(f == nil and fe == FUTURE, "a read at a future revision is refused", fe)

-- a restarted member still knows the compaction
local victim = others(leader())[1]
kill(victim)
run(1*s)
restart(victim)
run(2*s)
refused = 0
for i = 1, 3 do
  for j = 1, 3 do
    local r, e = client(i):get("cmp/a", { revision = rev[4] })
    if r == nil and e == COMPACTED then refused = refused + 1 end
  end
end
expect(refused == 9, "after a member restart every member still refuses the compacted revisions", refused)
heal_all()
run(1*s)
