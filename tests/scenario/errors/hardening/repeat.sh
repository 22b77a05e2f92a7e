#!/bin/sh
# repeat.sh N CMD...: runs CMD N times (each a new process, so a new Lua string hash
# seed); fails at the first run that fails.
n=$1; shift
i=0
while [ $i -lt "$n" ]; do
  "$@" || { echo "run $i failed"; exit 1; }
  i=$((i + 1))
done
exit 0
