#!/bin/sh
# pass.sh FAULTLINE SCENARIO WORKDIR: the scenario passes on --target live (exit 0,
# every expect and check passing); its output is shown either way.
fl=$1; scn=$2; work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target live --db "$work/h.db" --workdir "$work/members"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo ok
