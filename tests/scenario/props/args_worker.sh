#!/bin/sh
# args_worker.sh: a sweep worker (faultline sweep --worker) that appends its arguments
# to $FL_ARGS_LOG, one line per run, then runs the real faultline ($FL_REAL_BIN) with
# them: tests/cmake/props.cmake checks that sweep --paranoid reaches every run.
echo "$*" >> "$FL_ARGS_LOG"
exec "$FL_REAL_BIN" "$@"
