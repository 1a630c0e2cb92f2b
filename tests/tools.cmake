# SPDX-License-Identifier: MIT
# ernicctl and common/ tests; include()d from tests/CMakeLists.txt.

# End to end, as root (exit 77 = skipped otherwise). Serial: it checks
# that failed commands leave /dev/infiniband untouched.
add_test(NAME ernicctl
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ernicctl_test.sh $<TARGET_FILE:ernicctl>)
set_tests_properties(ernicctl PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 120)

if(NOT TARGET PkgConfig::CMOCKA)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

# ernic.conf parser and writer.
add_executable(test_conf ${CMAKE_CURRENT_LIST_DIR}/test_conf.c)
target_link_libraries(test_conf PRIVATE ernic_common PkgConfig::CMOCKA)
add_test(NAME conf COMMAND test_conf)

# rtnetlink helpers against a real kernel, in private network namespaces
# (root; exit 77 = skipped otherwise).
add_executable(test_net ${CMAKE_CURRENT_LIST_DIR}/test_net.c)
target_link_libraries(test_net PRIVATE ernic_common PkgConfig::CMOCKA)
add_test(NAME net COMMAND test_net)
set_tests_properties(net PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
