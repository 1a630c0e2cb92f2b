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

# The device state file shared between processes: forked children.
add_executable(test_devstate ${CMAKE_CURRENT_LIST_DIR}/test_devstate.c)
target_link_libraries(test_devstate PRIVATE ernic_common PkgConfig::CMOCKA)
add_test(NAME devstate COMMAND test_devstate)
set_tests_properties(devstate PROPERTIES TIMEOUT 60)

# Files passed with a message (a VFIO broker's EB_ATTACH), on a real
# socket pair.
add_executable(test_fdpass ${CMAKE_CURRENT_LIST_DIR}/test_fdpass.c)
target_link_libraries(test_fdpass PRIVATE ernic_common PkgConfig::CMOCKA)
add_test(NAME fdpass COMMAND test_fdpass)

# rtnetlink helpers against a real kernel, in private network namespaces
# (root; exit 77 = skipped otherwise).
add_executable(test_net ${CMAKE_CURRENT_LIST_DIR}/test_net.c)
target_link_libraries(test_net PRIVATE ernic_common PkgConfig::CMOCKA)
add_test(NAME net COMMAND test_net)
set_tests_properties(net PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)

# libernic-preload.so hands contexts of other providers to libibverbs:
# here a stand-in libibverbs takes them.
add_library(preload_fake_verbs SHARED
  ${CMAKE_CURRENT_LIST_DIR}/preload_fake_verbs.c)
target_include_directories(preload_fake_verbs PRIVATE ${IBVERBS_INCLUDE_DIRS})
target_link_options(preload_fake_verbs PRIVATE
  -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/preload_fake_verbs.map)
set_target_properties(preload_fake_verbs PROPERTIES LIBRARY_OUTPUT_DIRECTORY
  ${CMAKE_CURRENT_BINARY_DIR})
add_executable(test_preload ${CMAKE_CURRENT_LIST_DIR}/test_preload.c)
target_include_directories(test_preload PRIVATE ${IBVERBS_INCLUDE_DIRS})
target_link_libraries(test_preload PRIVATE preload_fake_verbs
  PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_test(NAME preload COMMAND test_preload)
set_tests_properties(preload PROPERTIES
  ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:ernic-preload>")

# ernicctl dump and stats while ib_write_bw runs on the fixture's
# software ERNICs and virtual FPGAs (tests/tools_regs.sh).
add_test(NAME tools_regs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tools_regs.sh)
set_tests_properties(tools_regs PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 120)

# Packets that fail one Table 2-3 check each, sent at a device from a
# UDP socket (tests/syn_send.c, for tools_regs).
add_executable(syn_send ${CMAKE_CURRENT_LIST_DIR}/syn_send.c)
target_link_libraries(syn_send PRIVATE ernic_model)
set_property(TEST tools_regs APPEND PROPERTY ENVIRONMENT
  "ERNIC_SYN_SEND=$<TARGET_FILE:syn_send>")

# Every Table 2-3 row the model implements, end to end: a QP of ernict0
# connected through verbs to a peer the test plays on a UDP socket, one
# crafted packet per row, the syndrome counted by ernicctl stats and the
# row's impact checked (tests/test_syn_rows.c, docs/syndromes.md).
ernic_verbs_test(syn_rows test_syn_rows.c syn_util.c verbs_util.c)
target_link_libraries(syn_rows PRIVATE ernic_model ernic_common)
set_tests_properties(syn_rows PROPERTIES TIMEOUT 120)

# The MAC/IPv4/UDP rows of Table 2-3 end to end, on the frame wire: a
# frame-wire device in a namespace, hand-made frames from the other end
# of a veth pair (tests/syn_frame.sh, tests/test_syn_frame.c).
add_executable(test_syn_frame ${CMAKE_CURRENT_LIST_DIR}/test_syn_frame.c
  ${CMAKE_CURRENT_LIST_DIR}/syn_util.c ${CMAKE_CURRENT_LIST_DIR}/verbs_util.c)
target_link_libraries(test_syn_frame PRIVATE PkgConfig::CMOCKA
  PkgConfig::IBVERBS PkgConfig::ZLIB ernic ernic_model ernic_common)
add_test(NAME syn_frame COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/syn_frame.sh
  $<TARGET_FILE:test_syn_frame>)
set_tests_properties(syn_frame PROPERTIES ENVIRONMENT "${ERNIC_TEST_ENV}"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 120)
