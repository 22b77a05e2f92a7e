#!/bin/sh
# bundled_run.sh FAULTLINE REPO DIR: every bundled scenario (scenarios/*.lua, seeds/,
# bugs/) runs on the runtime at seed 1 without a script error or an internal error:
# exit 0 (pass) or 1 (a check failed; bug scenarios without their switch should pass,
# but judging that is their own tests' job). Exit 2 or 3 here means the runtime and a
# scenario disagree about the language.
bin=$1; repo=$2; dir=$3
mkdir -p "$dir"; db="$dir/bundled.db"; rm -f "$db" "$db-wal" "$db-shm"
status=0; n=0
for f in "$repo"/scenarios/*.lua "$repo"/scenarios/seeds/*.lua "$repo"/scenarios/bugs/*.lua; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  err=$("$bin" run "$f" --seed 1 --db "$db" 2>&1 >/dev/null); rc=$?
  if [ $rc -ge 2 ]; then
    echo "$f: exit $rc"; echo "$err" | grep -E "\.lua:[0-9]+:|faultline:" | head -3; status=1
  fi
done
echo "$n scenarios run"
exit $status
