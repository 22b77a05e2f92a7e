#!/bin/sh
# same_digest.sh FAULTLINE DB SCENARIO ARGS1 [ARGS2...]: runs the scenario once per ARGS
# word list (each in a new process, so with a new Lua string hash seed; "-" for none)
# and checks that every run exits 0 with the same digest.
bin=$1; db=$2; scn=$3; shift 3
first=""
for args in "$@"; do
  [ "$args" = - ] && args=""
  rm -f "$db" "$db-wal" "$db-shm"
  # shellcheck disable=SC2086
  out=$("$bin" run "$scn" --db "$db" --json $args 2>/dev/null); rc=$?
  d=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  echo "run with '$args': exit $rc digest $d"
  [ "$rc" = 0 ] || { echo "exit $rc, want 0"; exit 1; }
  [ -n "$d" ] || { echo "no digest"; exit 1; }
  [ -z "$first" ] && first=$d
  [ "$d" = "$first" ] || { echo "digest $d differs from $first"; exit 1; }
done
exit 0
