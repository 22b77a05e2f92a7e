# client_scenarios.cmake: the client scenarios (owner: client-scenarios). Every
# scenarios/seeds/ client scenario must pass at seeds 1..3 (sweeps cover 1..20); each
# client bug scenario must fail with its --bug, on the check it is meant to trip,
# and pass without it. Each run writes its own database in the build tree.
set(FL_CSCN_DB ${CMAKE_BINARY_DIR}/tests/client-scenarios)
file(MAKE_DIRECTORY ${FL_CSCN_DB})

fl_seed_scenarios(${FL_CSCN_DB} expect balancer-kill balancer-pause balancer-partition-8673
                  stream-stuck-8673 balancer-blacklist-5s retry-at-most-once connections)
# Bug scenarios: the check each is meant to trip with the bug on.
fl_bug_scenarios(${FL_CSCN_DB} retry-sent-writes=client.retry_sent_writes=linearizability
                 no-failover=client.no_failover=expect)
