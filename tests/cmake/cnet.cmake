# cnet.cmake: client-side network faults (issue 14 §2; owner: cnet). Every network
# fault takes clients: each kind takes effect on the client's links alone and is undone
# (faults_client.lua), its `faults` rows name clients "cN" in the summary, the database
# and the report (faults_check.py), bad arguments are script errors naming FILE:LINE
# (exit 2), runs are deterministic, a failing run replays and shrinks to its client
# fault (replay_check.py), and the seed scenario balancer-client-partition asserts the
# grpc1.0 stall, health_aware's quick move and grpc1.7's fixed 5 s wait.
set(FL_CNET ${CMAKE_SOURCE_DIR}/tests/scenario/cnet)
set(FL_CNET_DB ${CMAKE_BINARY_DIR}/tests/cnet)
file(MAKE_DIRECTORY ${FL_CNET_DB})

foreach(seed 1 2 3)
  fl_run_test(scenario.cnet.faults_client.seed${seed} scenario 120 0 -
    ${FL_CNET}/faults_client.lua --seed ${seed} --db ${FL_CNET_DB}/faults_client.db --json)
  fl_run_test(scenario.cnet.balancer_client_partition.seed${seed} scenario 120 0 -
    ${CMAKE_SOURCE_DIR}/scenarios/seeds/balancer-client-partition.lua --seed ${seed}
    --db ${FL_CNET_DB}/balancer_client_partition.db --json)
endforeach()

fl_test(scenario.cnet.faults_rows scenario 180
  python3 ${FL_CNET}/faults_check.py ${FL_BIN} ${FL_CNET_DB}/rows)
fl_test(scenario.cnet.replay scenario 600
  python3 ${FL_CNET}/replay_check.py ${FL_BIN} ${FL_CNET_DB}/replay)

# Same seed, same digest (twice each for seeds 1..3; three different digests).
fl_test(determinism.cnet.faults_client determinism 300
  ${CMAKE_SOURCE_DIR}/tests/scenario/determinism.sh ${FL_BIN} ${FL_CNET}/faults_client.lua
  ${FL_CNET_DB}/det-faults)
fl_test(determinism.cnet.balancer_client_partition determinism 300
  ${CMAKE_SOURCE_DIR}/tests/scenario/determinism.sh ${FL_BIN}
  ${CMAKE_SOURCE_DIR}/scenarios/seeds/balancer-client-partition.lua ${FL_CNET_DB}/det-balancer)

# Bad arguments: FILE:LINE and the message, exit 2.
foreach(pair
    "unknown_client|bad argument #1 to 'client' \\(unknown client 3 \\(the scenario has 2\\)\\)"
    "both_sides|partition: client 1 is on both sides"
    "twice|bad argument #1 to 'partition' \\(client 2 is listed twice \\(positions 1 and 2\\)\\)"
    "net_both|net: client 1 is on both sides"
    "net_empty|net.from: an empty list"
    "net_oneway|net.oneway: only with from or to"
    "net_twice|net.from: client 1 is listed twice \\(positions 1 and 2\\)"
    "net_string|net.to: node id expected, got string at position 2"
    "hold_string|bad argument #2 to 'hold' \\(node id expected, got string\\)"
    "clog_unknown|bad argument #2 to 'clog' \\(unknown node id 4"
    "watch_endpoint|bad argument #1 to 'partition' \\(node id expected, got userdata at position 1\\)"
    "isolate_unknown|bad argument #1 to 'isolate' \\(unknown node id 7")
  string(FIND "${pair}" "|" bar)
  string(SUBSTRING "${pair}" 0 ${bar} f)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${pair}" ${bar} -1 msg)
  fl_run_test(cli.cnet.error.${f} cli 30 2 "cnet/errors/${f}.lua:3: ${msg}"
    ${FL_CNET}/errors/${f}.lua --db ${FL_CNET_DB}/errors.db --json)
endforeach()
