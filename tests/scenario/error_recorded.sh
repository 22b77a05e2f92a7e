#!/bin/sh
# error_recorded.sh FAULTLINE SCENARIO DB: a run that stops on a script error is in the
# database with verdict 'error'.
bin=$1; scn=$2; db=$3
rm -f "$db" "$db-wal" "$db-shm"
"$bin" run "$scn" --db "$db" 2>/dev/null
v=$(sqlite3 "$db" "select verdict from runs")
[ "$v" = error ] || { echo "verdict '$v', want error"; exit 1; }
