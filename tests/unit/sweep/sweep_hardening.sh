#!/bin/sh
# sweep_hardening.sh MODE BIN SRC WORKDIR: regression tests of issue 12 for `faultline
# sweep` and the CLI (owner: sweep). MODE is one of
#   sigkill     SIGKILL of a sweep: its workers end within a bound (parent-death signal),
#               its work folder stays behind and the next sweep removes it, while the
#               folder of a sweep that is still alive is left alone
#   stale       the cleaning rules: a folder whose owner lock is free or whose owner pid
#               is gone is removed, one whose lock is held or whose owner lives is kept,
#               names of any other shape are never touched
#   shrinkkill  SIGKILL of `faultline shrink` takes the replay it forked with it (the
#               same parent-death rule, harness/lua/scn_replay.c)
#   signals     SIGHUP and SIGTERM stop a sweep like SIGINT: partial results, exit 3,
#               no worker and no work folder left
#   bigsummary  runs whose --json summary is megabytes (100,000 expects) keep their
#               verdict and digest in a sweep instead of becoming 'error'
#   fdlimit     -j beyond the open-file limit: the pool is capped (said on stderr) or the
#               soft limit raised, and every seed passes instead of "too many open files"
#   badargs     hostile arguments (seed ranges, -j, shards, repeated options, numbers with
#               garbage, empty shards, in-memory databases): exit 2, one message naming
#               the argument, nothing run or created
#   help        every subcommand answers --help and -h with its usage on stdout, exit 0;
#               unknown options exit 2 with the usage on stderr
#   quoting     the replay:/shrink: lines and the sweep's replay commands of a scenario
#               whose path holds spaces, quotes, $, a backquote, a newline and an ESC run
#               as printed through sh -c; no raw control byte reaches stderr or stdout
# Database checks use python3's sqlite3 module.
set -u
MODE=$1 BIN=$2 SRC=$3 W=$4
SCN=$SRC/scenarios/smoke.lua
rm -rf "$W" && mkdir -p "$W" || exit 1
PIDS="" MADE=""
cleanup() {
  for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
  for d in $MADE; do rm -rf "$d"; done
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$W/err" ] && tail -30 "$W/err"; exit 1; }
q() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('\n'.join('|'.join(str(x) for x in r) for r in c.execute(sys.argv[2])))" "$@"; }

# A scenario that runs for many wall seconds (a busy cluster for a long simulated time).
long_scenario() {
  cat >"$1" <<'EOF'
scenario { name = "long", cluster = { nodes = 3 }, clients = { count = 2 },
           workload = { rate = 200, keys = 8 } }
run(100000*s)
EOF
}

# "running", or "gone" for a pid that has exited (a zombie not yet reaped counts as gone).
state() {
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
  case $st in ''|Z|X) echo gone ;; *) echo running ;; esac
}

# Waits up to $2 seconds for sweep pid $1 to have $3 workers; prints their pids.
workers_of() {
  i=0
  while [ $i -lt $(($2 * 10)) ]; do
    k=$(pgrep -P "$1" | tr '\n' ' ')
    [ "$(echo $k | wc -w)" -ge "$3" ] && { echo $k; return 0; }
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

# The work folder of sweep pid $1 (in $FAULTLINE_SWEEP_TMP or /dev/shm, or beside
# database $2).
workdir_of() {
  for d in "${FAULTLINE_SWEEP_TMP:-/dev/shm}"/faultline-sweep."$1".* "$(dirname "$2")/.$(basename "$2").sweep.$1".*; do
    [ -d "$d" ] && { echo "$d"; return 0; }
  done
  return 1
}

# A pid that surely exited.
dead_pid() { sh -c 'echo $$'; }

case $MODE in
sigkill)
  # A memory folder of this test's own: any sweep on the machine (another test's, run in
  # parallel) cleans what a dead sweep left in the shared /dev/shm, which raced with the
  # checks below (1 failure in 3 under load).
  mkdir "$W/shm" && export FAULTLINE_SWEEP_TMP="$W/shm" || fail "setup"
  long_scenario "$W/long.lua"
  # a live sweep whose folder must survive the cleaning
  "$BIN" sweep "$W/long.lua" --seeds 1..2 -j 1 --db "$W/live.db" 2>"$W/live.err" &
  live=$!; PIDS="$PIDS $live"
  "$BIN" sweep "$W/long.lua" --seeds 1..4 -j 2 --db "$W/k.db" 2>"$W/err" &
  victim=$!; PIDS="$PIDS $victim"
  kids=$(workers_of $victim 60 2) || fail "the sweep started no workers"
  PIDS="$PIDS $kids"
  workers_of $live 60 1 >/dev/null || fail "the live sweep started no worker"
  kill -9 $victim
  wait $victim 2>/dev/null
  i=0
  for k in $kids; do
    while [ "$(state $k)" = running ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(state $k)" = gone ] || fail "worker $k still runs 10 s after its sweep was killed"
  done
  dir=$(workdir_of $victim "$W/k.db") || fail "no work folder of sweep $victim"
  case $dir in "$W/shm/"*) ;; *) fail "the work folder $dir is not in FAULTLINE_SWEEP_TMP" ;; esac
  live_dir=$(workdir_of $live "$W/live.db") || fail "no work folder of sweep $live"
  [ -d "$dir" ] || fail "the killed sweep's folder vanished by itself (test cannot tell)"
  "$BIN" sweep "$SCN" --seeds 1..1 -j 1 --db "$W/next.db" 2>"$W/err" || fail "next sweep exit $?"
  [ -d "$dir" ] && fail "the next sweep left the dead sweep's folder $dir"
  [ -d "$live_dir" ] || fail "the next sweep removed the live sweep's folder $live_dir"
  [ "$(state $live)" = running ] || fail "the live sweep died"
  kill -INT $live
  wait $live
  rc=$?
  [ $rc -eq 3 ] || fail "live sweep exit $rc after SIGINT, expected 3"
  [ -d "$live_dir" ] && fail "the live sweep did not remove its own folder"
  ;;
stale)
  [ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm || base=$W
  if [ $base = /dev/shm ]; then pre=faultline-sweep.; else pre=.s.db.sweep.; fi
  d1=$(dead_pid); d2=$(dead_pid); d3=$(dead_pid)
  tag=$(printf %05d $(($$ % 100000)))
  A=$base/$pre$d1.a$tag B=$base/$pre$d2.b$tag C=$base/$pre$$.c$tag D=$base/$pre$d3.d$tag
  E=$base/${pre}e$tag F=$base/$pre$d1.toolong7 G=$base/$pre$d1.f$tag held=$base/${pre}held-$$
  MADE="$A $B $C $D $E $F $G $held"
  # owner dead, lock free -> removed
  mkdir "$A" && : >"$A/owner.lock" && : >"$A/job-0.db" || fail "setup"
  # owner dead, no lock yet -> removed
  mkdir "$B" && : >"$B/job-1.db-wal" || fail "setup"
  # owner pid alive (this shell), no lock yet -> kept
  mkdir "$C" || fail "setup"
  # lock held by a live process (whatever the pid in the name says) -> kept; locked
  # under another name first, as a sweep does, so no other sweep sees it unlocked
  mkdir "$held" && : >"$held/owner.lock" || fail "setup"
  python3 -c 'import fcntl,sys,time; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); print("locked", flush=True); time.sleep(120)' \
    "$held/owner.lock" >"$W/locker" &
  locker=$!; PIDS="$PIDS $locker"
  i=0; while ! grep -q locked "$W/locker" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  grep -q locked "$W/locker" || fail "setup: no lock"
  mv "$held" "$D" || fail "setup"
  # names of another shape (older builds named folders without a pid) -> kept
  mkdir "$E" "$F" || fail "setup"
  # a symlink with a dead owner's name -> kept (and its target untouched)
  mkdir "$W/target" && : >"$W/target/keep" && ln -s "$W/target" "$G" || fail "setup"
  # beside the database too (where a sweep works when there is no /dev/shm)
  mkdir "$W/.s.db.sweep.$d2.g$tag" "$W/.s.db.sweep.$$.h$tag" || fail "setup"
  "$BIN" sweep "$SCN" --seeds 1..1 -j 1 --db "$W/s.db" 2>"$W/err" || fail "sweep exit $?"
  [ -e "$W/.s.db.sweep.$d2.g$tag" ] && fail "beside the database, dead owner: not removed"
  [ -d "$W/.s.db.sweep.$$.h$tag" ] || fail "beside the database, live owner: removed"
  [ -e "$A" ] && fail "dead owner, free lock: not removed"
  [ -e "$B" ] && fail "dead owner, no lock: not removed"
  [ -d "$C" ] || fail "live owner without lock: removed"
  [ -d "$D" ] || fail "held lock: removed"
  [ -d "$E" ] && [ -d "$F" ] || fail "other names: removed"
  [ -L "$G" ] && [ -f "$W/target/keep" ] || fail "symlink followed or removed"
  ;;
shrinkkill)
  printf '%s\n' 'scenario { name = "lfail", cluster = { nodes = 3 }, clients = { count = 2 },' \
    '           workload = { rate = 200, keys = 8 } }' 'expect(false, "fails at once")' \
    'run(100000*s)' >"$W/lfail.lua"
  "$BIN" shrink "$W/lfail.lua" --seed 1 -o "$W/out.lua" 2>"$W/err" &
  sh_pid=$!; PIDS="$PIDS $sh_pid"
  kids=$(workers_of $sh_pid 60 1) || fail "shrink forked no replay"
  PIDS="$PIDS $kids"
  kill -9 $sh_pid
  wait $sh_pid 2>/dev/null
  i=0
  for k in $kids; do
    while [ "$(state $k)" = running ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(state $k)" = gone ] || fail "replay $k still runs 10 s after its shrink was killed"
  done
  ;;
signals)
  long_scenario "$W/long.lua"
  for sig in HUP TERM; do
    "$BIN" sweep "$W/long.lua" --seeds 1..4 -j 2 --db "$W/$sig.db" 2>"$W/err" &
    sw=$!; PIDS="$PIDS $sw"
    kids=$(workers_of $sw 60 2) || fail "$sig: no workers"
    PIDS="$PIDS $kids"
    dir=$(workdir_of $sw "$W/$sig.db") || fail "$sig: no work folder"
    kill -$sig $sw
    wait $sw
    rc=$?
    [ $rc -eq 3 ] || fail "$sig: exit code $rc, expected 3"
    for k in $kids; do [ "$(state $k)" = gone ] || fail "$sig: worker $k still runs"; done
    [ -d "$dir" ] && fail "$sig: work folder left"
    [ "$(q "$W/$sig.db" 'select count(*) from runs')" = 2 ] || fail "$sig: partial runs"
  done
  ;;
bigsummary)
  cat >"$W/many.lua" <<'EOF'
scenario { name = "many", cluster = { nodes = 1 } }
run(1*s)
for i = 1, 100000 do expect(true, "claim number " .. i, i) end
EOF
  sed 's/expect(true,/expect(i ~= 50000,/' "$W/many.lua" >"$W/manyfail.lua"
  "$BIN" run "$W/many.lua" --seed 3 --db "$W/one.db" --json >"$W/one.json" 2>/dev/null || fail "run exit $?"
  [ "$(wc -c <"$W/one.json")" -gt 2000000 ] || fail "summary not large enough to test anything"
  "$BIN" sweep "$W/many.lua" "$W/manyfail.lua" --seeds 3..3 -j 2 --db "$W/s.db" 2>"$W/err"
  rc=$?
  [ $rc -eq 1 ] || fail "exit code $rc, expected 1 (one pass, one fail)"
  [ "$(q "$W/s.db" "select verdict from runs r where scenario like '%/many.lua'")" = pass ] || fail "passing run not pass"
  [ "$(q "$W/s.db" "select verdict from runs r where scenario like '%/manyfail.lua'")" = fail ] || fail "failing run not fail"
  want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$W/one.json")
  [ "$(q "$W/s.db" "select digest from runs where scenario like '%/many.lua'")" = "$want" ] || fail "digest differs from the run's"
  [ "$(q "$W/s.db" "select count(*) from runs where verdict='error'")" = 0 ] || fail "a run became error"
  ;;
fdlimit)
  # hard and soft limit 64: the pool is capped, every seed waits its turn and passes
  (ulimit -n 64 && exec "$BIN" sweep "$SCN" --seeds 1..24 -j 24 --db "$W/a.db") 2>"$W/err"
  rc=$?
  [ $rc -eq 0 ] || fail "capped: exit code $rc"
  grep -q "capped to" "$W/err" || fail "no message about the cap"
  [ "$(q "$W/a.db" "select count(*) from runs where verdict='pass'")" = 24 ] || fail "capped: not 24 passing runs"
  # only the soft limit is low: it is raised and nothing is capped
  hard=$(sh -c 'ulimit -Hn')
  if [ "$hard" = unlimited ] || [ "$hard" -ge 200 ]; then
    (ulimit -Sn 40 && exec "$BIN" sweep "$SCN" --seeds 1..24 -j 24 --db "$W/b.db") 2>"$W/err"
    rc=$?
    [ $rc -eq 0 ] || fail "raised: exit code $rc"
    grep -q "capped to" "$W/err" && fail "capped although the hard limit allows it"
    [ "$(q "$W/b.db" "select count(*) from runs where verdict='pass'")" = 24 ] || fail "raised: not 24 passing runs"
  fi
  ;;
badargs)
  cd "$W" || fail "cd"
  # expect2 NEEDLE CMD...: exit 2, and the first stderr line names NEEDLE
  expect2() {
    needle=$1; shift
    "$@" >"$W/out" 2>"$W/err"; rc=$?
    [ $rc -eq 2 ] || fail "exit $rc for: $*"
    head -1 "$W/err" | grep -qF -- "$needle" || fail "message does not name '$needle' for: $* -> $(head -1 "$W/err")"
    [ -s "$W/out" ] && fail "stdout not empty for: $*"
    return 0
  }
  expect2 "--seeds '5..1'" "$BIN" sweep "$SCN" --seeds 5..1
  expect2 "--seeds '..'" "$BIN" sweep "$SCN" --seeds ..
  expect2 "--seeds '1..'" "$BIN" sweep "$SCN" --seeds 1..
  expect2 "--seeds '..3'" "$BIN" sweep "$SCN" --seeds ..3
  expect2 "out of range" "$BIN" sweep "$SCN" --seeds 1..18446744073709551616
  expect2 "--seeds ' 1..2'" "$BIN" sweep "$SCN" --seeds " 1..2"
  expect2 "--seeds '+1..2'" "$BIN" sweep "$SCN" --seeds "+1..2"
  expect2 "-j '0'" "$BIN" sweep "$SCN" -j 0
  expect2 "-j '999999'" "$BIN" sweep "$SCN" -j 999999
  expect2 "-j '2x'" "$BIN" sweep "$SCN" -j 2x
  expect2 "-j '-1'" "$BIN" sweep "$SCN" -j -1
  expect2 "-j '0'" "$BIN" sweep "$SCN" -j0
  expect2 "--shard '0/3'" "$BIN" sweep "$SCN" --shard 0/3
  expect2 "--shard '3/0'" "$BIN" sweep "$SCN" --shard 3/0
  expect2 "--shard '4/3'" "$BIN" sweep "$SCN" --shard 4/3
  expect2 "--shard '1/3x'" "$BIN" sweep "$SCN" --shard 1/3x
  expect2 "--shard '/'" "$BIN" sweep "$SCN" --shard /
  expect2 "this shard has no runs" "$BIN" sweep "$SCN" --seeds 1..2 --shard 5/7
  expect2 "--seeds given twice" "$BIN" sweep "$SCN" --seeds 1..2 --seeds 3..4
  expect2 "-j given twice" "$BIN" sweep "$SCN" -j 2 -j3
  expect2 "--db given twice" "$BIN" sweep "$SCN" --db a.db --db b.db
  expect2 "--bug raft.vote_ignores_log given twice" "$BIN" sweep "$SCN" --bug raft.vote_ignores_log --bug raft.vote_ignores_log
  expect2 "--timeout '10s'" "$BIN" sweep "$SCN" --timeout 10s
  expect2 "--timeout 'nan'" "$BIN" sweep "$SCN" --timeout nan
  expect2 "--timeout '0x10'" "$BIN" sweep "$SCN" --timeout 0x10
  expect2 "--timeout" "$BIN" sweep "$SCN" --timeout
  expect2 "unknown option '--seed'" "$BIN" sweep "$SCN" --seed 1
  expect2 "is a directory" "$BIN" sweep "$W"
  expect2 "--report needs a non-empty path" "$BIN" sweep "$SCN" --report ""
  # outputs are checked before any run, not after a long sweep
  expect2 "--junit: cannot write '/nonexistent/j.xml': folder '/nonexistent' does not exist" "$BIN" sweep "$SCN" --junit /nonexistent/j.xml
  expect2 "--junit: '$W' is a folder" "$BIN" sweep "$SCN" --junit "$W"
  expect2 "--report: '$SCN' exists and is not a folder" "$BIN" sweep "$SCN" --report "$SCN"
  expect2 "--report: cannot write '/nonexistent/r/'" "$BIN" run "$SCN" --report /nonexistent/r/
  for db in "" ":memory:" "file:mem?mode=memory" "file::memory:" "file:x.db"; do
    expect2 "--db '$db'" "$BIN" sweep "$SCN" --seeds 1..1 --db "$db"
    expect2 "--db '$db'" "$BIN" run "$SCN" --db "$db"
  done
  [ -e x.db ] || [ -e "file:x.db" ] && fail "a refused --db created a file"
  expect2 "--seed ' -5'" "$BIN" run "$SCN" --seed " -5"
  expect2 "--seed '5x'" "$BIN" run "$SCN" --seed 5x
  expect2 "--seed '+5'" "$BIN" run "$SCN" --seed +5
  expect2 "--seed '18446744073709551616'" "$BIN" run "$SCN" --seed 18446744073709551616
  expect2 "--seed given twice" "$BIN" run "$SCN" --seed 1 --seed 1
  expect2 "--json given twice" "$BIN" run "$SCN" --json --json
  expect2 "--seed '0x10'" "$BIN" shrink "$SCN" --seed 0x10
  expect2 "--max-runs '1'" "$BIN" shrink "$SCN" --seed 1 --max-runs 1
  expect2 "--seed given twice" "$BIN" shrink "$SCN" --seed 1 --seed 2
  expect2 "--json given twice" "$BIN" bench --json --json
  [ -e faultline.db ] && fail "a refused command created faultline.db"
  # a range at the very top of uint64 still works (seed 18446744073709551615)
  "$BIN" sweep "$SCN" --seeds 18446744073709551614..18446744073709551615 --shard 2/2 -j 1 --db "$W/top.db" 2>"$W/err" || fail "top seed: exit $?"
  [ "$(q "$W/top.db" 'select count(*) from runs')" = 1 ] || fail "top seed: runs"
  ;;
help)
  for c in "" run sweep check report shrink bench list hunt; do
    for h in --help -h; do
      # shellcheck disable=SC2086
      "$BIN" $c $h >"$W/out" 2>"$W/err"; rc=$?
      [ $rc -eq 0 ] || fail "faultline $c $h: exit $rc"
      head -1 "$W/out" | grep -q "^usage: faultline" || fail "faultline $c $h: no usage on stdout"
      [ -z "$c" ] || head -1 "$W/out" | grep -q "^usage: faultline $c" || fail "faultline $c $h: not its own usage"
      [ -s "$W/err" ] && fail "faultline $c $h: wrote to stderr: $(cat "$W/err")"
    done
    [ -z "$c" ] && continue
    # after other arguments too
    "$BIN" $c x --help >"$W/out" 2>&1 || fail "faultline $c x --help: exit $?"
    # shellcheck disable=SC2086
    "$BIN" $c --no-such-option >"$W/out" 2>"$W/err"; rc=$?
    [ $rc -eq 2 ] || fail "faultline $c --no-such-option: exit $rc"
    grep -q "usage: faultline $c" "$W/err" || fail "faultline $c --no-such-option: no usage on stderr"
    [ -s "$W/out" ] && fail "faultline $c --no-such-option: wrote to stdout"
  done
  "$BIN" >"$W/out" 2>"$W/err"; [ $? -eq 2 ] && grep -q usage "$W/err" || fail "bare faultline"
  ;;
quoting)
  nl='
'
  esc=$(printf '\033')
  cr=$(printf '\r')
  dir="$W/a b'c\"d\$e\`f${nl}g${esc}[2Jh${cr}i"
  mkdir -p "$dir" || fail "mkdir"
  printf '%s\n' 'scenario { name = "q", cluster = { nodes = 1 } }' 'run(1*s)' \
    'expect(false, "msg\027[2J\r\nwith control bytes", "obs\027")' >"$dir/f ail.lua"
  scn="$dir/f ail.lua"
  "$BIN" run "$scn" --seed 3 --db "$W/q.db" >"$W/out" 2>"$W/err"
  [ $? -eq 1 ] || fail "run exit code"
  python3 - "$W/err" "$W/out" "$scn" "$BIN" "$W" <<'EOF' || fail "replay/shrink lines"
import os, re, subprocess, sys, unicodedata
err, out = (open(p, 'rb').read() for p in sys.argv[1:3])
scn, binary, w = sys.argv[3], sys.argv[4], sys.argv[5]
def controls(raw):
    text = raw.decode('utf-8')  # and valid UTF-8
    return sorted({hex(ord(c)) for c in text if unicodedata.category(c) == 'Cc' and c not in '\t\n'})
for name, raw in (("stderr", err), ("stdout", out)):
    assert not controls(raw), "%s carries raw control bytes %r" % (name, controls(raw))
text = err.decode('utf-8')
def line(tag):
    m = re.search(r'^' + tag + r': (faultline .*? --seed 3(?: --bug \S+)*)$', text, re.S | re.M)
    assert m, "no %s: line in %r" % (tag, text)
    return m.group(1)
def argv_of(cmd):
    # the words the shell makes of the printed line
    script = 'faultline() { printf "%s\\0" "$@"; }\n' + cmd
    return subprocess.run(['sh', '-c', script], capture_output=True, check=True).stdout.split(b'\0')[:-1]
enc = os.fsencode
assert argv_of(line('replay')) == [b'run', enc(scn), b'--seed', b'3'], argv_of(line('replay'))
assert argv_of(line('shrink')) == [b'shrink', enc(scn), b'--seed', b'3'], argv_of(line('shrink'))
# and the replay line really runs: same digest as the first run
env = dict(os.environ, PATH=os.path.dirname(binary) + ':' + os.environ['PATH'])
r = subprocess.run(['sh', '-c', line('replay') + ' --json --db ' + w + '/q2.db'], env=env,
                   capture_output=True)
assert r.returncode == 1, r
import json
d1 = re.search(rb'digest: ([0-9a-f]{16})', out).group(1).decode()
assert json.loads(r.stdout)["digest"] == d1
EOF
  "$BIN" sweep "$scn" --seeds 3..3 -j 1 --db "$W/s.db" >"$W/out" 2>"$W/err"
  [ $? -eq 1 ] || fail "sweep exit code"
  python3 - "$W/err" "$scn" <<'EOF' || fail "sweep replay line"
import os, re, subprocess, sys, unicodedata
err = open(sys.argv[1], 'rb').read()
bad = sorted({hex(ord(c)) for c in err.decode('utf-8') if unicodedata.category(c) == 'Cc' and c not in '\t\n'})
assert not bad, "sweep stderr carries raw control bytes %r" % bad
m = re.search(r'^    (faultline run .*? --seed 3)$', err.decode(), re.S | re.M)
assert m, err
script = 'faultline() { printf "%s\\0" "$@"; }\n' + m.group(1)
words = subprocess.run(['sh', '-c', script], capture_output=True, check=True).stdout.split(b'\0')[:-1]
assert words == [b'run', os.fsencode(sys.argv[2]), b'--seed', b'3'], words
EOF
  ;;
*) fail "unknown mode $MODE" ;;
esac
echo "sweep_hardening $MODE: ok"
