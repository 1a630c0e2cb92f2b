# SPDX-License-Identifier: MIT
# ernic_faultq: an NFQUEUE fault injector for the test wire (drop,
# duplicate, reorder, delay, corrupt RoCEv2 packets); include()d from
# tests/CMakeLists.txt. tests/faultinj/faultq.sh has the shell helpers
# app tests use; faultq_selftest checks the injector itself (root).
pkg_check_modules(NFQ REQUIRED IMPORTED_TARGET libnetfilter_queue)
# add-rule: libnftnl builds the rule, libmnl sends the batch.
pkg_check_modules(NFTNL REQUIRED IMPORTED_TARGET libnftnl)
pkg_check_modules(MNL REQUIRED IMPORTED_TARGET libmnl)

set(_fq ${CMAKE_CURRENT_LIST_DIR}/faultinj)
add_executable(ernic_faultq ${_fq}/ernic_faultq.c ${_fq}/faultq_opts.c
  ${_fq}/faultq_pkt.c ${_fq}/faultq_rule.c)
target_link_libraries(ernic_faultq PRIVATE PkgConfig::NFQ PkgConfig::NFTNL
  PkgConfig::MNL m)

# Sends numbered RoCE-shaped datagrams through the injector and checks
# what arrives against the injector's log and counters.
add_executable(faultq_check ${_fq}/faultq_check.c ${_fq}/faultq_pkt.c)
target_link_libraries(faultq_check PRIVATE Threads::Threads m)

add_test(NAME faultq_selftest
  COMMAND bash ${_fq}/selftest.sh $<TARGET_FILE:ernic_faultq>
          $<TARGET_FILE:faultq_check>)
set_tests_properties(faultq_selftest PROPERTIES SKIP_RETURN_CODE 77
  RUN_SERIAL ON TIMEOUT 180)
