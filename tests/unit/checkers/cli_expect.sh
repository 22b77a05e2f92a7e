#!/bin/sh
# cli_expect.sh EXIT REGEX CMD ARGS...: runs CMD, fails unless it exits with EXIT and
# its stdout+stderr match the extended regular expression REGEX. Used by
# tests/cmake/checkers.cmake for the `faultline check` error paths and --json shape.
want_exit="$1"; regex="$2"; shift 2
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" != "$want_exit" ]; then
    echo "cli_expect: exit $rc, wanted $want_exit" >&2; exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
    echo "cli_expect: output does not match: $regex" >&2; exit 1
fi
exit 0
