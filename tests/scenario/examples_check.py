#!/usr/bin/env python3
"""examples_check.py FAULTLINE SRC WORKDIR: the examples/ for sweeps beyond one machine.
The Slurm script is run for real (three array tasks, then its merge step) and its
merged database must hold every seed once; the Kubernetes manifest and the GitHub
Actions workflow are checked for what makes them shard correctly (an Indexed Job whose
completions, parallelism and FAULTLINE_SHARD_COUNT agree and whose pods run
`--shard auto`; a matrix whose shards 1..N match the `/N` of --shard; a merge of every
shard's database). YAML is parsed when PyYAML is there, the same facts read by pattern
otherwise."""
import os
import re
import shutil
import sqlite3
import subprocess
import sys

fl, src, work = sys.argv[1:4]
ex = os.path.join(src, "examples")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# --- Slurm: three array tasks and the merge, for real -------------------------------
out = os.path.join(work, "slurm")
base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CI_NODE",
        "CIRCLE_NODE", "BUILDKITE_PARALLEL", "JOB_COMPLETION"))}
base.update(FAULTLINE=fl, SCENARIO=os.path.join(src, "scenarios/smoke.lua"), SEEDS="1..7",
            OUT=out)
script = os.path.join(ex, "slurm-sweep.sh")
for task in (1, 2, 3):  # --array=1-3
    env = dict(base, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT="3",
               SLURM_ARRAY_TASK_MIN="1", SLURM_CPUS_PER_TASK="1")
    p = subprocess.run(["sh", script], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (task, p.stderr)
    assert f"shard {task}/3 from Slurm job array" in p.stderr, p.stderr
p = subprocess.run(["sh", script, "merge"], env=base, capture_output=True, text=True,
                   timeout=300)
assert p.returncode == 0, p.stderr
db = sqlite3.connect(os.path.join(out, "all.db"))
seeds = [r[0] for r in db.execute("select seed from runs order by seed")]
assert seeds == list(range(1, 8)), seeds
assert os.path.exists(os.path.join(out, "report", "index.html"))
p = subprocess.run(["sh", script], env=base, capture_output=True, text=True, timeout=60)
assert p.returncode != 0 and "sbatch" in p.stderr, "outside an array the script refuses"

# --- Kubernetes Indexed Job ----------------------------------------------------------
k8s = open(os.path.join(ex, "kubernetes-indexed-job.yaml")).read()
completions = re.search(r"^\s+completions:\s*(\d+)", k8s, re.M)
parallelism = re.search(r"^\s+parallelism:\s*(\d+)", k8s, re.M)
count = re.search(r"name: FAULTLINE_SHARD_COUNT\s+value:\s*\"(\d+)\"", k8s)
assert completions and parallelism and count, "completions, parallelism, FAULTLINE_SHARD_COUNT"
assert completions.group(1) == count.group(1), (completions.group(1), count.group(1))
assert re.search(r"completionMode:\s*Indexed", k8s)
assert "--shard auto" in k8s and "shard-${JOB_COMPLETION_INDEX}.db" in k8s
assert re.search(r"faultline merge /results/all.db /results/shard-\*\.db", k8s)
# --- GitHub Actions matrix ------------------------------------------------------------
gha = open(os.path.join(ex, "github-actions-sweep.yml")).read()
shards = re.search(r"shard:\s*\[([\d,\s]+)\]", gha)
assert shards, "matrix shards"
ks = [int(x) for x in shards.group(1).split(",")]
n = re.search(r"--shard \$\{\{ matrix\.shard \}\}/(\d+)", gha)
assert n and ks == list(range(1, int(n.group(1)) + 1)), (ks, n and n.group(1))
assert "faultline merge all.db shards/*/shard-*.db" in gha
try:
    import yaml
except ImportError:
    yaml = None
if yaml:
    docs = list(yaml.safe_load_all(k8s))
    job = docs[0]["spec"]
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"] == int(count.group(1))
    wf = yaml.safe_load(gha)
    assert wf["jobs"]["merge"]["needs"] == "sweep"
    assert wf["jobs"]["sweep"]["strategy"]["matrix"]["shard"] == ks
print("ok")
