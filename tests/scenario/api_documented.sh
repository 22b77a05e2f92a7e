#!/bin/sh
# api_documented.sh FAULTLINE README: every name of `faultline list api` appears in
# the README as `name...` (a code span that starts with it).
bin=$1; readme=$2
names=$("$bin" list api) || exit 1
[ -n "$names" ] || { echo "list api printed nothing"; exit 1; }
status=0
for n in $names; do
  grep -qF "\`$n" "$readme" || { echo "undocumented: $n"; status=1; }
done
exit $status
