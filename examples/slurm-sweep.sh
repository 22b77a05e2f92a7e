#!/bin/sh
# A seed sweep spread over a Slurm job array: one array task per shard, each running
# one shard of the seeds with `--shard auto` (from SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN), then a dependent job merges the
# shard databases into one history and one report:
#
#   jobid=$(sbatch --parsable examples/slurm-sweep.sh)
#   sbatch --dependency=afterany:"$jobid" --wrap "sh examples/slurm-sweep.sh merge"
#
# FAULTLINE, SCENARIO, SEEDS and OUT may be set in the environment (sbatch --export).
#SBATCH --job-name=faultline-sweep
#SBATCH --array=0-15
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=04:00:00
set -eu
FAULTLINE=${FAULTLINE:-build/faultline}
SCENARIO=${SCENARIO:-scenarios/chaos.lua}
SEEDS=${SEEDS:-1..16000}
OUT=${OUT:-faultline-sweep}
mkdir -p "$OUT"
if [ "${1:-}" = merge ]; then
    "$FAULTLINE" merge "$OUT/all.db" "$OUT"/shard-*.db
    exec "$FAULTLINE" report "$OUT/all.db" -o "$OUT/report"
fi
task=${SLURM_ARRAY_TASK_ID:?run this script through sbatch (a job array), or with merge}
exec "$FAULTLINE" sweep "$SCENARIO" --seeds "$SEEDS" --shard auto \
    -j "${SLURM_CPUS_PER_TASK:-2}" --db "$OUT/shard-$task.db" --junit "$OUT/shard-$task.xml"
