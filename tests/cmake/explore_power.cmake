# explore_power.cmake: the explorer's fresh seeds and its Figure 8 signal (owner:
# explore7). explore_power_check.py: `seeds`, each explore seed draws its own fresh
# world seeds (two explore seeds none in common, the same one twice the same output, a
# finding's replay line naming a seed drawn); `split`, a run that opens Raft's Figure 8
# window (two voters' logs equally long, ending in different terms) lists the risky
# situation log_term_split, on the member with the newer last term, and a run that does
# not, none.
#
# It also writes chaos_hard.lua, the hard setting of the explore-against-random
# measurement (scenarios/README.md, `faultline explore`): chaos.lua whose swarm{} draws
# every fault lane but churn and lag (so neither the figure-8 nemesis, which
# swarm{ lanes } leaves out, nor the churn and lag episodes, which make several bugs easy).
set(FL_PSCN ${CMAKE_SOURCE_DIR}/tests/scenario)
set(FL_PDB ${CMAKE_BINARY_DIR}/tests/explore_power)
file(MAKE_DIRECTORY ${FL_PDB})

foreach(case seeds split)
  add_test(NAME cli.explore.power_${case}
           COMMAND python3 ${FL_PSCN}/explore_power_check.py ${FL_BIN} ${FL_PDB}/${case} ${case})
  set_tests_properties(cli.explore.power_${case} PROPERTIES LABELS cli TIMEOUT 600
                       ENVIRONMENT "FL_SRC=${CMAKE_SOURCE_DIR}")
endforeach()

set(FL_CHAOS ${CMAKE_SOURCE_DIR}/scenarios/chaos.lua)
file(READ ${FL_CHAOS} FL_CHAOS_TEXT)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FL_CHAOS})
set(FL_CHAOS_SWARM "local world = swarm {}")
string(FIND "${FL_CHAOS_TEXT}" "${FL_CHAOS_SWARM}" FL_CHAOS_AT)
if(FL_CHAOS_AT LESS 0)
  message(FATAL_ERROR "explore_power.cmake: ${FL_CHAOS} has no '${FL_CHAOS_SWARM}' line")
endif()
string(REPLACE "${FL_CHAOS_SWARM}"
       "local world = swarm { lanes = { \"partition\", \"kill\", \"power\", \"pause\", \"skew\", \"net\", \"hold\", \"membership\", \"move_leader\", \"compact\", \"defrag\", \"quota\", \"snapshot\", \"slow\", \"leader_crash\", \"restore\" } }"
       FL_CHAOS_HARD "${FL_CHAOS_TEXT}")
file(WRITE ${CMAKE_BINARY_DIR}/tests/explore/chaos_hard.lua
     "-- chaos_hard.lua: written by tests/cmake/explore_power.cmake from scenarios/chaos.lua\n"
     "-- (its swarm{} with every fault lane but churn and lag); do not edit.\n"
     "${FL_CHAOS_HARD}")
