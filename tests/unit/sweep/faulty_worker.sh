#!/bin/sh
# faulty_worker.sh: a stand-in worker for `faultline sweep --worker` in tests. It is
# called as the sweep calls faultline: run SCENARIO --seed N --json --db FILE ...
# For the seeds listed in FL_CRASH_SEEDS it aborts before running; FL_LATE_CRASH_SEEDS
# run the real binary (FL_REAL_BIN) and then die of SIGSEGV after the database is
# written; FL_HANG_SEEDS sleep until killed; FL_NOISY_SEEDS print a stray line on stdout
# before the summary; every other seed runs the real binary.
seed=$4
case " $FL_CRASH_SEEDS " in *" $seed "*) echo "worker: crashing on purpose" >&2; kill -ABRT $$ ;; esac
case " $FL_HANG_SEEDS " in *" $seed "*) sleep 600; exit 0 ;; esac
case " $FL_LATE_CRASH_SEEDS " in
  *" $seed "*) "$FL_REAL_BIN" "$@" >/dev/null; kill -SEGV $$ ;;
esac
case " $FL_NOISY_SEEDS " in *" $seed "*) echo "stray output {not json" ;; esac
exec "$FL_REAL_BIN" "$@"
