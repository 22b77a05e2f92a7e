#!/bin/sh
# sweep_timeout.sh FAULTLINE SCENARIO DIR: a sweep hands its per-run --timeout to every
# worker's `faultline run`, so a worker ends its own run in time (recorded 'error' with
# the reason) instead of only being killed.
bin=$1; scn=$2; dir=$3
rm -rf "$dir"; mkdir -p "$dir"
cat > "$dir/worker.sh" <<W
#!/bin/sh
echo "\$*" >> "$dir/args"
exec "$bin" "\$@"
W
chmod +x "$dir/worker.sh"
"$bin" sweep "$scn" --seeds 1..2 -j 1 --timeout 37.5 --worker "$dir/worker.sh" \
  --db "$dir/sweep.db" >/dev/null 2>&1
cat "$dir/args"
n=$(grep -c -- "--timeout 37.5" "$dir/args")
[ "$n" = 2 ] || { echo "$n of 2 worker runs got --timeout 37.5"; exit 1; }
exit 0
