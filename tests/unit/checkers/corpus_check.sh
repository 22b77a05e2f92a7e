#!/bin/sh
# corpus_check.sh FAULTLINE CORPUS_DIR: runs `faultline check` on every history of the
# porcupine corpus and compares the exit code with expected_verdicts.tsv (0 for
# linearizable, 1 for not). Exits 77 (ctest SKIP) when the corpus is absent.
bin="$1"; dir="$2"
if [ ! -f "$dir/expected_verdicts.tsv" ]; then
    echo "SKIP: porcupine corpus not found at $dir"; exit 77
fi
n=0; ok=0
while IFS="$(printf '\t')" read -r file expected rest; do
    [ "$file" = "file" ] && continue
    case "$expected" in
        linearizable) want=0 ;;
        not_linearizable) want=1 ;;
        none) want=2 ;;  # the empty file: no operations is bad input (issue 12)
        *) continue ;;
    esac
    "$bin" check "$dir/$file" >/dev/null 2>&1; rc=$?
    n=$((n + 1))
    if [ "$rc" = "$want" ]; then ok=$((ok + 1)); else echo "MISMATCH $file: exit $rc, want $want"; fi
done < "$dir/expected_verdicts.tsv"
echo "corpus agreement: $ok/$n"
[ "$n" -gt 0 ] && [ "$ok" = "$n" ]
