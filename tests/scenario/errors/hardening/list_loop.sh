#!/bin/sh
# list_loop.sh FAULTLINE DIR: `faultline list scenarios` reads each scenario up to its
# scenario{}; one that loops first is cut off (after 10 s) instead of hanging the list.
bin=$1; dir=$2
rm -rf "$dir"; mkdir -p "$dir/scenarios"
printf 'while true do end\n' > "$dir/scenarios/loop.lua"
printf 'scenario { name = "ok", description = "still listed" }\n' > "$dir/scenarios/ok.lua"
out=$(cd "$dir" && "$bin" list scenarios 2>&1); rc=$?
echo "$out"
echo "$out" | grep -q "still listed" || { echo "ok.lua is not listed"; exit 1; }
echo "$out" | grep -q "loop.lua.*timeout" || { echo "loop.lua does not say timeout"; exit 1; }
exit 0
