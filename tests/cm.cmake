# SPDX-License-Identifier: MIT
# The connection manager (cm/); include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CMOCKA)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

# CM messages: round trips, IBTA byte positions, hostile headers; and
# tshark's InfiniBand dissector decodes each one as CM, not malformed.
add_executable(test_cm_msg ${CMAKE_CURRENT_LIST_DIR}/test_cm_msg.c)
target_link_libraries(test_cm_msg PRIVATE ernic_cm ernic_model ernic_common
  PkgConfig::CMOCKA)
add_test(NAME cm_msg COMMAND test_cm_msg)
add_test(NAME cm_tshark COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cm_tshark.sh
  $<TARGET_FILE:test_cm_msg>)
set_tests_properties(cm_tshark PROPERTIES TIMEOUT 120)

# CM connections: two CMs back to back through a fake network and clock;
# every state, retransmission, timeout, timewait and hostile MAD.
add_executable(test_cm_conn ${CMAKE_CURRENT_LIST_DIR}/test_cm_conn.c
  ${CMAKE_CURRENT_LIST_DIR}/test_cm_conn_more.c
  ${CMAKE_CURRENT_LIST_DIR}/cm_conn_harness.c)
target_link_libraries(test_cm_conn PRIVATE ernic_cm ernic_model ernic_common
  PkgConfig::CMOCKA)
add_test(NAME cm_conn COMMAND test_cm_conn)
