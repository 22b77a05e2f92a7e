#!/usr/bin/env python3
"""Checks `faultline bench --curves --json` under FL_BENCH_CURVES_QUICK=1 (issue 17 §2):
every point measured in its own child (its own peak memory), the e2e grid complete,
the checker points decided with the sizes asked, the sweep figures present. It tests
the machinery, never a speed."""
import json, os, subprocess, sys

exe = sys.argv[1]
env = dict(os.environ, FL_BENCH_CURVES_QUICK="1")
p = subprocess.run([exe, "bench", "--curves", "--json"], env=env, capture_output=True,
                   text=True, timeout=300)
assert p.returncode == 0, (p.returncode, p.stderr)
c = json.loads(p.stdout)["curves"]
assert c["quick"] is True
grid = sorted((e["members"], e["clients"]) for e in c["e2e"])
assert grid == [(m, k) for m in (3, 5, 7) for k in (8, 64, 512)], grid
for e in c["e2e"]:
    assert "error" not in e, e
    assert e["e2e_speedup"] > 0 and e["sim_s"] > 1 and e["ops"] > 0, e
    assert e["peak_rss_mb"] > 0 and e["cpu_s"] > 0, e
sizes = [k["ops"] for k in c["checkers"]]
assert sizes == [1000, 10000], sizes
for k in c["checkers"]:
    assert k["lin_verdict"] == "pass" and k["watch_verdict"] == "pass", k
    assert k["lin_ms"] >= 0 and k["watch_ms"] >= 0 and k["peak_rss_mb"] > 0, k
    # the check's own peak (VmHWM reset after generation) holds at least the history
    assert k["history_rss_mb"] > 0 and k["check_peak_rss_mb"] >= k["history_rss_mb"] * 0.9, k
# a bigger history costs the child more memory: the figure is the child's own
assert c["checkers"][1]["peak_rss_mb"] >= c["checkers"][0]["peak_rss_mb"], c["checkers"]
s = c["sweep"]
assert s.get("sweep_runs_per_s_j1", 0) > 0 and s.get("sweep_runs_per_s_j2", 0) > 0, s
print("curves: %d e2e points, %d checker points, sweep j1 %.2f j2 %.2f runs/s" %
      (len(c["e2e"]), len(c["checkers"]), s["sweep_runs_per_s_j1"], s["sweep_runs_per_s_j2"]))
