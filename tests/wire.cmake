# SPDX-License-Identifier: MIT
# RoCEv2 codec and the model's wire port; include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CMOCKA)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

add_executable(test_roce_pkt ${CMAKE_CURRENT_LIST_DIR}/test_roce_pkt.c)
target_link_libraries(test_roce_pkt PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME roce_pkt COMMAND test_roce_pkt)

add_executable(test_roce_frame ${CMAKE_CURRENT_LIST_DIR}/test_roce_frame.c)
target_link_libraries(test_roce_frame PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME roce_frame COMMAND test_roce_frame)

# Real sockets on 127.0.0.2/.3 and ::1 (frame mode on lo needs
# CAP_NET_RAW: exit 77 = skipped otherwise). Serial: the software devices
# of other tests bind the same addresses.
add_executable(test_wire ${CMAKE_CURRENT_LIST_DIR}/test_wire.c)
target_link_libraries(test_wire PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME wire COMMAND test_wire)
set_tests_properties(wire PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 60)

# SO_REUSEPORT steering by destination QP (eBPF), real sockets; root.
add_executable(test_steer ${CMAKE_CURRENT_LIST_DIR}/test_steer.c)
target_link_libraries(test_steer PRIVATE ernic_model PkgConfig::CMOCKA)
add_test(NAME steer COMMAND test_steer)
set_tests_properties(steer PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)

# The same steering for frame mode (AF_PACKET socket filters), on lo in a
# network namespace of its own; root.
add_executable(test_steer_frame ${CMAKE_CURRENT_LIST_DIR}/test_steer_frame.c)
target_link_libraries(test_steer_frame PRIVATE ernic_model PkgConfig::CMOCKA)
add_test(NAME steer_frame COMMAND test_steer_frame)
set_tests_properties(steer_frame PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)

# Batching on the UDP wire (model/wire_batch.h): GSO trains, GRO buffers
# cut back into datagrams, the order and ICRCs over real sockets on
# 127.0.0.62/.63 (with CAP_NET_RAW also the train's IPv4 IDs on lo, and
# a frame-wire port on .64 cutting the trains it gets: wire_frame.h).
add_executable(test_wire_batch ${CMAKE_CURRENT_LIST_DIR}/test_wire_batch.c)
target_link_libraries(test_wire_batch PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME wire_batch COMMAND test_wire_batch)
set_tests_properties(wire_batch PROPERTIES TIMEOUT 60)

# UDP_GRO on a shared port (model/wire_batch.h): a train mixing QPs is
# cut to its first segment's QP and GRO turned off; real sockets on
# 127.0.0.66/.67.
add_executable(test_wire_gro ${CMAKE_CURRENT_LIST_DIR}/test_wire_gro.c)
target_link_libraries(test_wire_gro PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME wire_gro COMMAND test_wire_gro)
set_tests_properties(wire_gro PROPERTIES TIMEOUT 60)

# Payloads sent from where they are (model_wire_queue_split): a train of
# split and whole packets arrives as roce_build makes them, the payload
# read at the flush; a tap port gets them glued. 127.0.0.68/.69.
add_executable(test_wire_split ${CMAKE_CURRENT_LIST_DIR}/test_wire_split.c)
target_link_libraries(test_wire_split PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME wire_split COMMAND test_wire_split)
set_tests_properties(wire_split PROPERTIES TIMEOUT 60)
