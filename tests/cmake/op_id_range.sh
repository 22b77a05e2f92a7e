#!/bin/sh
# op_id_range.sh FAULTLINE DIR: chk_op.op_id is 32-bit. An op id of 4294967295 loads
# and checks; 4294967296 is bad input naming the file and line (exit 2).
set -u
bin=$1
dir=$2
mkdir -p "$dir"
line() {
    printf '{"op":"put","id":%s,"client":1,"call":1,"return":2,"rev":2,"key":"a","value":"1"}\n' "$1"
}
line 4294967295 > "$dir/ok.jsonl"
line 4294967296 > "$dir/big.jsonl"
"$bin" check "$dir/ok.jsonl" > "$dir/ok.out" 2>&1 || { cat "$dir/ok.out"; echo "FAIL: id 4294967295 refused"; exit 1; }
"$bin" check "$dir/big.jsonl" > "$dir/big.out" 2>&1
rc=$?
cat "$dir/big.out"
[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, want 2"; exit 1; }
grep -q "big.jsonl:1: operation id 4294967296 is out of range (want 0..4294967295)" "$dir/big.out" ||
    { echo "FAIL: message"; exit 1; }
echo ok
