#!/bin/sh
# pass.sh FAULTLINE SCENARIO WORKDIR [PROGRAM]: the scenario passes on --target etcd
# (exit 0) and leaves no process of its work directory behind. Skips (77) without etcd,
# or without PROGRAM when given (strace for failpoints).
fl=$1; scn=$2; work=$3; needs=$4
if [ -n "$needs" ] && ! command -v "$needs" >/dev/null 2>&1; then
    echo "skipped: $needs not installed"; exit 77
fi
if [ -z "$FL_ETCD" ] && ! command -v etcd >/dev/null 2>&1; then
    echo "skipped: etcd not installed"; exit 77
fi
if [ -z "$FL_ETCDCTL" ] && ! command -v etcdctl >/dev/null 2>&1; then
    echo "skipped: etcdctl not installed (restore and converge run it)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$fl" run "$scn" --target etcd --db "$work/h.db" --workdir "$work/members"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
sleep 0.2
if pgrep -f "$work/members" > /dev/null; then
    echo "FAIL: processes of the run left:"; pgrep -af "$work/members"; exit 1
fi
# members' data (etcd preallocates 64 MB WAL files: ~370 MB a run) only kept on failure
rm -rf "$work/members"
echo ok
