# SPDX-License-Identifier: MIT
# Provider data path between two software ERNICs; include()d from
# tests/CMakeLists.txt. "datapath": WQEs, doorbells and refused posts
# (no queue engine needed). "datapath_wire": every opcode end to end and
# the error completions, through the model's queue engine. "events":
# interrupts, completion channels and async events.
add_executable(test_datapath ${CMAKE_CURRENT_LIST_DIR}/test_datapath.c
  ${CMAKE_CURRENT_LIST_DIR}/test_datapath_wire.c
  ${CMAKE_CURRENT_LIST_DIR}/test_events.c
  ${CMAKE_CURRENT_LIST_DIR}/test_mad.c
  ${CMAKE_CURRENT_LIST_DIR}/test_datapath_sge.c
  ${CMAKE_CURRENT_LIST_DIR}/test_cq_ex.c
  ${CMAKE_CURRENT_LIST_DIR}/datapath_util.c
  ${CMAKE_CURRENT_LIST_DIR}/verbs_util.c)
# The test reads the SQ ring through the provider's own QP structure.
target_include_directories(test_datapath PRIVATE ${CMAKE_SOURCE_DIR}/access)
target_link_libraries(test_datapath PRIVATE PkgConfig::CMOCKA
  PkgConfig::IBVERBS ernic Threads::Threads)
add_test(NAME datapath COMMAND test_datapath post)
add_test(NAME datapath_wire COMMAND test_datapath wire)
# Completion channels, CQ arming, QP fatal async events and recovery.
add_test(NAME events COMMAND test_datapath events)
# MADs on QP1 (ernicdv_mad_*).
add_test(NAME mad COMMAND test_datapath mad)
# Several SGEs, staging, inline sizes, caps; refusals silent by default.
add_test(NAME datapath_sge COMMAND test_datapath sge)
# ibv_create_cq_ex and start_poll / next_poll / end_poll.
add_test(NAME datapath_cqex COMMAND test_datapath cqex)
set_tests_properties(datapath datapath_wire events mad datapath_sge
  datapath_cqex
  PROPERTIES
  FIXTURES_REQUIRED ernicdevs ENVIRONMENT "${ERNIC_TEST_ENV}"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)

# A CQ with more than 64 QPs (its busy bits in two words), on the
# fixture's two devices with C_NUM_QP=128.
add_test(NAME datapath_words COMMAND test_datapath words)
set_tests_properties(datapath_words PROPERTIES
  FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV};DP_A=ernicw0 127.0.0.46;DP_B=ernicw1 127.0.0.47"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)

# Every group again on other devices of the fixture: both sides virtual
# FPGAs (ernic-vfpga) through the provider's UIO backend, and both sides
# software ERNICs that simulate a non-coherent bus (--noncoherent), where
# the provider's cache maintenance is all that moves bytes between the
# CPU's view and the IP's. DP_A / DP_B ("DEVICE ADDR") run any group on
# other devices by hand.
foreach(_on "uio;ernicu0 127.0.0.52;ernicu1 127.0.0.53;DP_VFPGA=1"
            "noncoherent;ernicn0 127.0.0.62;ernicn1 127.0.0.63;DP_NONCOHERENT=1")
  list(GET _on 0 _sfx)
  list(GET _on 1 _a)
  list(GET _on 2 _b)
  list(GET _on 3 _x)
  foreach(_g post wire events mad sge cqex)
    set(_n datapath_${_g}_${_sfx})
    add_test(NAME ${_n} COMMAND test_datapath ${_g})
    set_tests_properties(${_n} PROPERTIES
      FIXTURES_REQUIRED ernicdevs
      ENVIRONMENT "${ERNIC_TEST_ENV};DP_A=${_a};DP_B=${_b};${_x}"
      SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)
  endforeach()
  # The refusals' reasons, at rdma-core's debug log level.
  set_property(TEST datapath_sge_${_sfx} APPEND PROPERTY ENVIRONMENT
    "VERBS_LOG_LEVEL=4")
endforeach()

# ernicdv_qp_hw_offload: a QP handed to user logic, which the test plays
# on the model's HW handshake ports (model/ernic_hndshk.h).
add_executable(test_hw_offload ${CMAKE_CURRENT_LIST_DIR}/test_hw_offload.c
  ${CMAKE_CURRENT_LIST_DIR}/datapath_util.c
  ${CMAKE_CURRENT_LIST_DIR}/verbs_util.c)
target_include_directories(test_hw_offload PRIVATE ${CMAKE_SOURCE_DIR}/access
  ${CMAKE_SOURCE_DIR}/model)
target_link_libraries(test_hw_offload PRIVATE PkgConfig::CMOCKA
  PkgConfig::IBVERBS ernic Threads::Threads ${CMAKE_DL_LIBS})
add_test(NAME hw_offload COMMAND test_hw_offload)
set_tests_properties(hw_offload PROPERTIES
  FIXTURES_REQUIRED ernicdevs ENVIRONMENT "${ERNIC_TEST_ENV}"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 300)
