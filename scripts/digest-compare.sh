#!/usr/bin/env bash
# digest-compare.sh BUILD_A BUILD_B: runs chosen scenarios and seeds with the faultline
# binary of each build and fails when any digest differs (DESIGN §6: Debug, Release and
# sanitizer builds must agree byte for byte). Build A's runs have --paranoid on
# (FAULTLINE_PARANOID=1), B's off: the invariant checks must not change a digest either.
set -euo pipefail
a=${1:?build dir A}
b=${2:?build dir B}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for scn in scenarios/smoke.lua scenarios/chaos.lua; do
    [ -f "$scn" ] || continue
    for seed in 1 2 3; do
        da=$(FAULTLINE_PARANOID=1 "$a/faultline" run "$scn" --seed "$seed" --json --db "$tmp/a.db" 2>/dev/null |
             grep -o '"digest": *"[0-9a-f]*"' || true)
        db=$(FAULTLINE_PARANOID=0 "$b/faultline" run "$scn" --seed "$seed" --json --db "$tmp/b.db" 2>/dev/null |
             grep -o '"digest": *"[0-9a-f]*"' || true)
        n=$((n + 1))
        if [ -z "$da" ] || [ "$da" != "$db" ]; then
            echo "digest mismatch: $scn seed $seed: $a gives '$da', $b gives '$db'"
            fail=$((fail + 1))
        fi
    done
done
echo "digest-compare: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
