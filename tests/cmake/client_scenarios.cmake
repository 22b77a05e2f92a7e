# client_scenarios.cmake: the client scenarios (owner: client-scenarios). Every
# scenarios/seeds/ client scenario must pass at seeds 1..3 (sweeps cover 1..20); each
# client bug scenario must fail with its --bug, on the check it is meant to trip,
# and pass without it. Each run writes its own database in the build tree.
set(FL_CSCN_DB ${CMAKE_BINARY_DIR}/tests/client-scenarios)
file(MAKE_DIRECTORY ${FL_CSCN_DB})

# client_verdict: RC CHECK CMD... runs CMD (a `faultline run ... --json`), requires
# exit code RC and, unless CHECK is "-", that check's verdict (fail for RC 1, else
# pass).
set(FL_CSCN_VERDICT [=[
import json, subprocess, sys
want, check, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
try:
    o = json.loads(p.stdout)
except ValueError:
    print("stdout is not one JSON object:", p.stdout[:400], p.stderr[-2000:])
    sys.exit(1)
got = o["checks"].get(check, {}).get("verdict") if check != "-" else None
want_v = "fail" if want == 1 else "pass"
print("exit", p.returncode, "want", want, "check", check, got)
if p.returncode != want or (check != "-" and got != want_v):
    print(p.stderr[-3000:])
    sys.exit(1)
]=])

function(fl_cscn_test name timeout)
  add_test(NAME ${name} COMMAND python3 -c "${FL_CSCN_VERDICT}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS scenario TIMEOUT ${timeout})
endfunction()

foreach(s balancer-kill balancer-pause balancer-partition-8673 stream-stuck-8673
          balancer-blacklist-5s retry-at-most-once connections)
  foreach(seed 1 2 3)
    fl_cscn_test(scenario.client.${s}.seed${seed} 120
      0 expect ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/seeds/${s}.lua --seed ${seed}
      --db ${FL_CSCN_DB}/${s}.db --json)
  endforeach()
endforeach()

# Bug scenarios: the check each is meant to trip with the bug on.
foreach(pair "retry-sent-writes|client.retry_sent_writes|linearizability"
             "no-failover|client.no_failover|expect")
  string(REPLACE "|" ";" parts "${pair}")
  list(GET parts 0 s)
  list(GET parts 1 bug)
  list(GET parts 2 check)
  foreach(seed 1 2 3)
    fl_cscn_test(scenario.client_bug.${s}.on.seed${seed} 120
      1 ${check} ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/bugs/${s}.lua --seed ${seed}
      --bug ${bug} --db ${FL_CSCN_DB}/${s}-on.db --json)
    fl_cscn_test(scenario.client_bug.${s}.off.seed${seed} 120
      0 ${check} ${FL_BIN} run ${CMAKE_SOURCE_DIR}/scenarios/bugs/${s}.lua --seed ${seed}
      --db ${FL_CSCN_DB}/${s}-off.db --json)
  endforeach()
endforeach()
