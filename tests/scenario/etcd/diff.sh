#!/bin/sh
# diff.sh FAULTLINE DIR WORKDIR: `faultline diff` over sim and etcd: a scenario both
# run alike agrees (exit 0, two seeds); one that calls skew differs (exit 1) with the
# verdict row marked and the etcd side's reason. Skips (77) without etcd.
fl=$1; dir=$2; work=$3
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$fl" diff "$dir/small.lua" --seeds 1..2 --json > agree.json; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: agreeing diff exit $rc"; cat agree.json; exit 1; }
python3 - <<'PY' || exit 1
import json
o = json.load(open("agree.json"))
assert o["targets"] == ["sim", "etcd"] and o["differ"] == 0, o
assert [s["seed"] for s in o["seeds"]] == [1, 2]
for s in o["seeds"]:
    assert s["sim"]["rows"]["verdict"] == "pass" and s["etcd"]["rows"]["verdict"] == "pass", s
    assert s["etcd"]["rows"]["expect L16 read back through client 2"] == "pass", s
    assert len(s["etcd"]["clients"]) == 2
PY
printf 'scenario { cluster = { nodes = 3 }, clients = { count = 1 } }\nrun(100*ms)\nskew(1, 2)\nrun(100*ms)\n' > skew.lua
out=$("$fl" diff skew.lua); rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "FAIL: differing diff exit $rc"; exit 1; }
echo "$out" | grep -q '^\* verdict  *pass  *error' || { echo "FAIL: verdict row not marked"; exit 1; }
echo "$out" | grep -qF "etcd: skew.lua:3: skew: not available on --target etcd" || { echo "FAIL: no reason"; exit 1; }
echo ok
