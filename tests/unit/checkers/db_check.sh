#!/bin/sh
# db_check.sh FAULTLINE SCENARIO WORKDIR: records two runs of a scenario into one
# database, then `faultline check DB` must ask for --run (exit 2, naming the runs),
# `--run 1 --json` must judge run 1 from the database (exit 0 or 1, "format":"db"),
# and `--run 9` must be refused (exit 2).
bin="$1"; scn="$2"; dir="$3"
db="$dir/checkers_db_check.db"
rm -f "$db" "$db-wal" "$db-shm"
"$bin" run "$scn" --seed 1 --db "$db" >/dev/null 2>&1
"$bin" run "$scn" --seed 2 --db "$db" >/dev/null 2>&1
[ -f "$db" ] || { echo "no database written"; exit 1; }
out=$("$bin" check "$db" 2>&1); rc=$?
echo "$out"
[ "$rc" = 2 ] || { echo "want exit 2 without --run, got $rc"; exit 1; }
echo "$out" | grep -q "choose one with --run" || exit 1
out=$("$bin" check "$db" --run 1 --json 2>&1); rc=$?
echo "$out"
case "$rc" in 0|1) ;; *) echo "want exit 0/1 for run 1, got $rc"; exit 1 ;; esac
echo "$out" | grep -q '"format":"db","run":1' || exit 1
echo "$out" | grep -q '"checks":{"linearizability":{"verdict"' || exit 1
"$bin" check "$db" --run 9 >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || { echo "want exit 2 for a missing run, got $rc"; exit 1; }
rm -f "$db" "$db-wal" "$db-shm"
exit 0
