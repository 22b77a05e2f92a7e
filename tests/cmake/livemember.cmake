# Tests owned by helper "livemember" (issue 16 §2): our members as OS processes
# (`faultline member`), with real files, fsync and loopback TCP.
set(FL_LIVEMEMBER_WORK ${CMAKE_BINARY_DIR}/livemember-tests)

# Three member processes behind peer proxies: writes, a partition, a SIGKILL and
# restart of one, of all three (every acknowledged write read back from disk),
# incarnations counted on disk.
add_executable(live_test_member ${CMAKE_CURRENT_SOURCE_DIR}/live/test_member.c)
target_include_directories(live_test_member PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
target_link_libraries(live_test_member PRIVATE fl_live fl_client fl_env fl_proto fl_common PkgConfig::UV
                      PkgConfig::JANSSON)
add_test(NAME live.member.restart
  COMMAND live_test_member ${FL_BIN} ${FL_LIVEMEMBER_WORK}/restart)
# faultline killed with SIGKILL (here the test program that started the members): its
# members die too.
add_test(NAME live.member.pdeath
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/live/pdeath.sh $<TARGET_FILE:live_test_member> ${FL_BIN}
          ${FL_LIVEMEMBER_WORK}/pdeath)
set_tests_properties(live.member.restart live.member.pdeath PROPERTIES LABELS live TIMEOUT 120)

# Bad arguments: exit 2 with a message naming what is wrong.
add_test(NAME cli.member.bad_args
  COMMAND sh -c "out=$(\"$0\" member --id 1 --data /tmp/x 2>&1); test $? -eq 2 && echo \"$out\" | grep -qF 'are required' && out=$(\"$0\" member --id 1 --data /tmp/x --peer-listen 1:2 --client-listen 5 2>&1); test $? -eq 2 && echo \"$out\" | grep -qF 'is not 127.0.0.1:PORT' && out=$(\"$0\" member --id 1 --data /tmp/x --peer-listen 4 --client-listen 5 --peers 1=6 2>&1); test $? -eq 2 && echo \"$out\" | grep -qF 'listed twice'" ${FL_BIN})
set_tests_properties(cli.member.bad_args PROPERTIES LABELS cli TIMEOUT 30)
