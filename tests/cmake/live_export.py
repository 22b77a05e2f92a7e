# faultline export round trip (issue 16 §4), run by tests/cmake/live.cmake:
#   live_export.py FAULTLINE SCENARIO SEED BUG|- WORKDIR
# Runs the scenario into a fresh database, exports it as JSON lines (to a file with
# -o and to stdout, which must match), checks both, and requires the same verdict and
# the same checks object, source line numbers aside (a database row has none, a JSON
# line has its line). The verdict must be the one the run stored (exit code 0 or 1).
import json, os, subprocess, sys

fl, scn, seed, bug, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
name = os.path.basename(scn).replace(".lua", "") + "-" + seed
db, jl = os.path.join(work, name + ".db"), os.path.join(work, name + ".jsonl")
for p in (db, jl):
    if os.path.exists(p):
        os.remove(p)
run = [fl, "run", scn, "--seed", seed, "--db", db]
if bug != "-":
    run += ["--bug", bug]
rc = subprocess.run(run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
if rc not in (0, 1):
    sys.exit("run exited %d" % rc)
ex = subprocess.run([fl, "export", db, "--format", "jsonl", "-o", jl])
if ex.returncode != 0:
    sys.exit("export -o exited %d" % ex.returncode)
out = subprocess.run([fl, "export", db, "--run", "1", "--format", "jsonl"], capture_output=True)
if out.returncode != 0 or out.stdout != open(jl, "rb").read():
    sys.exit("export to stdout differs from -o FILE (rc %d)" % out.returncode)


def check(path):
    p = subprocess.run([fl, "check", path, "--json"], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)


def strip_lines(x):
    if isinstance(x, dict):
        return {k: strip_lines(v) for k, v in x.items() if k != "line"}
    if isinstance(x, list):
        return [strip_lines(v) for v in x]
    return x


rc_db, a = check(db)
rc_jl, b = check(jl)
print("%s: run rc %d, db %s (rc %d), jsonl %s (rc %d), %d ops" %
      (name, rc, a["verdict"], rc_db, b["verdict"], rc_jl, a["ops"]["total"]))
if a["verdict"] != b["verdict"] or rc_db != rc_jl or a["ops"] != b["ops"]:
    sys.exit("verdicts differ")
if strip_lines(a["checks"]) != strip_lines(b["checks"]):
    sys.exit("checks objects differ")
want = "pass" if bug == "-" else "fail"
if a["verdict"] != want:
    sys.exit("expected a %s run, got %s" % (want, a["verdict"]))
