# explore_aim.cmake: sim.test_explore_aim compiles harness/cli/explore_mutate.c (the
# cli sources are no library) and checks that xp_aim never places an aimed fault
# before the parent's fault phase (owner: keepalive).
target_sources(sim_test_explore_aim PRIVATE ${CMAKE_SOURCE_DIR}/harness/cli/explore_mutate.c)
target_link_libraries(sim_test_explore_aim PRIVATE PkgConfig::JANSSON)
