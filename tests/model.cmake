# SPDX-License-Identifier: MIT
# Model and access-layer unit tests; include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CMOCKA)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

add_executable(test_model_regs ${CMAKE_CURRENT_LIST_DIR}/test_model_regs.c)
target_link_libraries(test_model_regs PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME model_regs COMMAND test_model_regs)

# ernic-sw: the backend ernic_access_open() loads, and the model behind
# its handles (found loaded, by soname).
add_executable(test_access_model ${CMAKE_CURRENT_LIST_DIR}/test_access_model.c)
target_link_libraries(test_access_model PRIVATE ernic_access ernic-sw
                      PkgConfig::CMOCKA)
add_test(NAME access_model COMMAND test_access_model)

add_executable(test_window ${CMAKE_CURRENT_LIST_DIR}/test_window.c)
target_link_libraries(test_window PRIVATE ernic_model ernic_common
                      PkgConfig::CMOCKA)
add_test(NAME window COMMAND test_window)

# Buffers moved into a DMA region without an IOMMU (access/uio_dma.c).
add_executable(test_uio_dma ${CMAKE_CURRENT_LIST_DIR}/test_uio_dma.c)
target_link_libraries(test_uio_dma PRIVATE ernic_access PkgConfig::CMOCKA)
add_test(NAME uio_dma COMMAND test_uio_dma)

# The VFIO backend without a kernel: its pure parts, open / DMA /
# interrupt / close against a fake of the VFIO ioctls, and a broker's
# shared region with a client attached to it.
add_executable(test_vfio ${CMAKE_CURRENT_LIST_DIR}/test_vfio.c
  ${CMAKE_CURRENT_LIST_DIR}/test_vfio_flow.c
  ${CMAKE_CURRENT_LIST_DIR}/test_vfio_share.c)
target_link_libraries(test_vfio PRIVATE ernic_access PkgConfig::CMOCKA)
add_test(NAME vfio COMMAND test_vfio)

# The model's receive path against crafted packets, driven by hand
# (no thread, no socket, a test clock): tests/model_harness.[ch].
add_library(model_harness STATIC ${CMAKE_CURRENT_LIST_DIR}/model_harness.c)
target_include_directories(model_harness PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(model_harness PUBLIC ernic_model ernic_common)
add_executable(test_model_rx ${CMAKE_CURRENT_LIST_DIR}/test_model_rx.c
  ${CMAKE_CURRENT_LIST_DIR}/test_model_read.c
  ${CMAKE_CURRENT_LIST_DIR}/test_model_window.c
  ${CMAKE_CURRENT_LIST_DIR}/test_model_nak.c
  ${CMAKE_CURRENT_LIST_DIR}/test_model_hold.c)
target_link_libraries(test_model_rx PRIVATE model_harness PkgConfig::CMOCKA)
add_test(NAME model_rx COMMAND test_model_rx)

# QP1: MADs in and out of the model, checked with the provider's codec.
add_executable(test_model_qp1 ${CMAKE_CURRENT_LIST_DIR}/test_model_qp1.c)
target_link_libraries(test_model_qp1 PRIVATE model_harness PkgConfig::CMOCKA)
add_test(NAME model_qp1 COMMAND test_model_qp1)

# PG332 "QP Fatal Recovery": the provider's procedure on a model stepped
# by hand, every register access recorded.
add_executable(test_model_recover ${CMAKE_CURRENT_LIST_DIR}/test_model_recover.c
  ${CMAKE_SOURCE_DIR}/providers/ernic/ernic_recover.c)
target_include_directories(test_model_recover PRIVATE
  ${CMAKE_SOURCE_DIR}/providers/ernic ${CMAKE_SOURCE_DIR}/access)
target_link_libraries(test_model_recover PRIVATE model_harness
  PkgConfig::CMOCKA)
add_test(NAME model_recover COMMAND test_model_recover)

# ECN and CNPs: marks, the CNP scheduling interrupt, QP1's CNPs and the
# cut of outstanding requests.
add_executable(test_model_cnp ${CMAKE_CURRENT_LIST_DIR}/test_model_cnp.c)
target_link_libraries(test_model_cnp PRIVATE model_harness PkgConfig::CMOCKA)
add_test(NAME model_cnp COMMAND test_model_cnp)
