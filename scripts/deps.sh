#!/usr/bin/env bash
# deps.sh: install the Debian packages faultline builds against, when missing.
# As root it runs apt-get; otherwise it prints the one line a user must run.
# python3 and sqlite3 are for the test scripts; the harness itself needs neither.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libuv1-dev libsqlite3-dev liblua5.4-dev
      libprotobuf-c-dev protobuf-c-compiler libfiu-dev libjansson-dev
      libxxhash-dev libssl-dev libcurl4-openssl-dev sqlite3 python3)
# `make fuzz` (FL_DEPS_FUZZ=1) also needs clang and its libFuzzer/sanitizer runtimes;
# the normal build does not.
if [ "${FL_DEPS_FUZZ:-0}" = 1 ]; then
    pkgs+=(clang-14 libclang-rt-14-dev)
fi
# `make deps ETCD=1` (FL_DEPS_ETCD=1; .ci/run sets it): Debian's etcd 3.4 server and
# etcdctl, for the live tests against a real etcd cluster (harness/live); those tests
# say "skipped: etcd not installed" without them. strace makes failpoint() real on
# etcd (a slow or crashing WAL sync by syscall injection; skipped without it).
if [ "${FL_DEPS_ETCD:-0}" = 1 ]; then
    pkgs+=(etcd-server etcd-client strace)
fi
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
    echo "deps.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "deps.sh: missing packages; run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
