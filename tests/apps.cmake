# SPDX-License-Identifier: MIT
# Unmodified Debian programs (ibverbs-utils, perftest) moving data
# between software ERNICs; include()d from tests/CMakeLists.txt. The
# scripts are in tests/apps/ (lib.sh documents the harness). All but
# app_pcap_selftest need root and skip (77) otherwise.
if(NOT TARGET PkgConfig::PCAP)
  pkg_check_modules(PCAP REQUIRED IMPORTED_TARGET libpcap)
endif()

# icrc_check: verifies every captured ICRC (Wireshark's InfiniBand
# dissector does not). It always has its own CRC-32; it also cross-checks
# with the model's roce_icrc() once model/*.c define it, which cmake
# finds out here (model sources are configure dependencies until then).
set(ERNIC_ICRC_MODEL OFF)
file(GLOB _ernic_model_src ${CMAKE_SOURCE_DIR}/model/*.c)
foreach(_src ${_ernic_model_src})
  file(STRINGS ${_src} _def REGEX "^[a-z_0-9 ]*roce_icrc\\(const struct roce_l3")
  if(_def)
    set(ERNIC_ICRC_MODEL ON)
  endif()
endforeach()
add_executable(icrc_check ${CMAKE_CURRENT_LIST_DIR}/icrc_check.c)
target_link_libraries(icrc_check PRIVATE PkgConfig::PCAP PkgConfig::ZLIB)
if(ERNIC_ICRC_MODEL)
  target_compile_definitions(icrc_check PRIVATE ICRC_HAVE_MODEL)
  target_link_libraries(icrc_check PRIVATE ernic_model)
else()
  message(STATUS "icrc_check: model/ defines no roce_icrc() yet; "
                 "app_capture and app_netns need it")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${_ernic_model_src})
endif()

set(_apps ${CMAKE_CURRENT_LIST_DIR}/apps)

# The checks of the checks: no root, no device.
add_test(NAME app_pcap_selftest
  COMMAND bash ${_apps}/pcap_selftest.sh $<TARGET_FILE:icrc_check>)
set_tests_properties(app_pcap_selftest PROPERTIES TIMEOUT 60)

# On lo, with the fixture's UDP-wire devices ernict0/ernict1 (and
# frame-wire devices the scripts add to the same overlay).
# app_uio: the same programs with one side and with both sides on the
# UIO path (the fixture's virtual FPGAs ernicu0/ernicu1); app_noncoherent:
# on software ERNICs that simulate a non-coherent bus.
# app_devshare: the device state file (ernicctl show) through a kill -9.
# app_latency_path: how ping-pongs' packets are taken (engine counters)
# and in which order an ACK and the reply it waited for leave (a capture).
# app_unplug: a virtual FPGA pulled under ibv_rc_pingpong -e and
# ibv_asyncwatch (devices of its own).
foreach(_t pingpong perftest loss uio noncoherent channels rdmacm devshare
        latency_path unplug)
  add_test(NAME app_${_t} COMMAND bash ${_apps}/${_t}.sh)
endforeach()
add_test(NAME app_capture
  COMMAND bash ${_apps}/capture.sh $<TARGET_FILE:icrc_check>)
# ECN: nftables marks packets CE, the receiver's CNPs go out through QP1.
add_test(NAME app_ecn COMMAND bash ${_apps}/ecn.sh $<TARGET_FILE:icrc_check>)
set_tests_properties(app_pingpong app_perftest app_loss app_uio
  app_noncoherent app_channels app_rdmacm app_capture app_ecn app_devshare
  app_latency_path app_unplug PROPERTIES FIXTURES_REQUIRED ernicdevs ENVIRONMENT "${ERNIC_TEST_ENV}"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 1200)

# ernic_check under ernic_faultq's drops, duplicates, reordering and bit
# flips, briefly (tests/apps/soak.sh runs it 5 minutes by hand).
add_test(NAME app_soak COMMAND bash ${_apps}/soak.sh
  $<TARGET_FILE:ernic_check> $<TARGET_FILE:ernic_faultq>)
set_tests_properties(app_soak PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV};SOAK_SECONDS=40" SKIP_RETURN_CODE 77
  RUN_SERIAL ON TIMEOUT 600)

# Across network namespaces, frame wire, each namespace its own overlay.
add_test(NAME app_netns
  COMMAND bash ${_apps}/netns.sh $<TARGET_FILE:icrc_check>)
add_test(NAME app_netns_loss COMMAND bash ${_apps}/netns_loss.sh)
# rdma_cm across namespaces, captured, under 5% loss, and failing.
add_test(NAME app_rdmacm_faults
  COMMAND bash ${_apps}/rdmacm_faults.sh $<TARGET_FILE:icrc_check>
          $<TARGET_FILE:rdmacm_survivor>)
# One frame-wire device, many processes: ib_write_bw pairs and rping.
add_test(NAME app_share_frame COMMAND bash ${_apps}/share_frame.sh)
set_tests_properties(app_netns app_netns_loss app_rdmacm_faults
  app_share_frame PROPERTIES
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 1800)

# rdmacm_cycles: 200 connect / disconnect cycles through our librdmacm in
# one process holding two software devices of its own overlay (ernicy0 on
# 127.0.0.76, ernicy1 on 127.0.0.77); no QP, id, fd or heap may leak. A
# plain rdma_cm program, linked with Debian's librdmacm; the script's
# LD_LIBRARY_PATH (ernicctl env) makes it run on ours, which it checks.
pkg_check_modules(RDMACM_LIB REQUIRED IMPORTED_TARGET librdmacm)
add_executable(rdmacm_cycles ${CMAKE_CURRENT_LIST_DIR}/rdmacm_cycles.c
  ${CMAKE_CURRENT_LIST_DIR}/rdmacm_cycles_leak.c)
target_link_libraries(rdmacm_cycles PRIVATE PkgConfig::RDMACM_LIB
  PkgConfig::IBVERBS ${CMAKE_DL_LIBS})
add_dependencies(rdmacm_cycles ernic-rdmacm)
# What the working side sees when its peer is killed (app_rdmacm_faults).
add_executable(rdmacm_survivor ${CMAKE_CURRENT_LIST_DIR}/rdmacm_survivor.c)
target_link_libraries(rdmacm_survivor PRIVATE PkgConfig::RDMACM_LIB
  PkgConfig::IBVERBS)
add_dependencies(rdmacm_survivor ernic-rdmacm)
add_test(NAME rdmacm_cycles
  COMMAND bash ${_apps}/rdmacm_cycles.sh $<TARGET_FILE:rdmacm_cycles>
          $<TARGET_FILE:ernic-rdmacm>)
set_tests_properties(rdmacm_cycles PROPERTIES ENVIRONMENT "${ERNIC_TEST_ENV}"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)
# A REQ that comes while the server is between two listens on its port
# (perftest -R's second connection) is held for the next listener.
add_executable(rdmacm_relisten ${CMAKE_CURRENT_LIST_DIR}/rdmacm_relisten.c)
target_link_libraries(rdmacm_relisten PRIVATE PkgConfig::RDMACM_LIB
  PkgConfig::IBVERBS)
add_dependencies(rdmacm_relisten ernic-rdmacm)
add_test(NAME rdmacm_relisten
  COMMAND bash ${_apps}/rdmacm_relisten.sh $<TARGET_FILE:rdmacm_relisten>)
set_tests_properties(rdmacm_relisten PROPERTIES
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 120)
