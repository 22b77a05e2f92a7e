#!/bin/sh
# sweep_clean.sh BIN SCENARIO SEEDS DB UNDECIDED: the plain chaos sweep finds nothing.
# Every run must pass, except the seeds listed in UNDECIDED (comma-separated), which
# may end `unknown` (a history the checkers cannot decide: they say so, and a pass is
# never claimed), never `fail` or `error`. A new unknown seed fails this test too, so
# the list only shrinks when the checkers learn to decide such a history.
BIN=$1 SCN=$2 SEEDS=$3 DB=$4 UNDECIDED=$5
rm -f "$DB" "$DB-wal" "$DB-shm"
"$BIN" sweep "$SCN" --seeds "$SEEDS" -j2 --db "$DB"
rc=$?
[ $rc -eq 0 ] && exit 0
[ $rc -eq 4 ] || { echo "FAIL: sweep exit $rc (a run failed or errored)"; exit 1; }
bad=$(sqlite3 "$DB" "SELECT seed || ':' || verdict FROM runs WHERE verdict != 'pass'" |
      while IFS=: read -r seed verdict; do
        case ",$UNDECIDED," in
          *",$seed,"*) [ "$verdict" = unknown ] || echo "$seed:$verdict" ;;
          *) echo "$seed:$verdict" ;;
        esac
      done)
[ -z "$bad" ] || { echo "FAIL: runs neither pass nor known-undecided: $bad"; exit 1; }
echo "sweep clean: every run passes but the known undecided seeds ($UNDECIDED)"
