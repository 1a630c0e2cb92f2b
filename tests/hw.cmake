# SPDX-License-Identifier: MIT
# The RX side band block in RTL (hw/), replayed under Icarus Verilog
# with the AXI traffic the software ERNIC traces for real programs, its
# memory compared byte for byte with the model's (tests/hw/sideband.sh).
# Root (the fixture's devices); skips (77) otherwise.
add_executable(sb_memcmp ${CMAKE_CURRENT_LIST_DIR}/hw/sb_memcmp.c)
add_test(NAME hw_sideband COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hw/sideband.sh
  ${CMAKE_SOURCE_DIR} $<TARGET_FILE:sb_memcmp> $<TARGET_FILE:ernic_faultq>)
set_tests_properties(hw_sideband PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 600)

# The hardware backends on real kernel drivers (issue 17): the
# ../shared/hwguest guest (vfio-pci behind an emulated IOMMU,
# uio_pci_generic, QEMU's edu) runs hw_vfio_edu and hw_uio_edu, built
# here. Label kernel-hw: booting a TCG guest is too slow for every run,
# so scripts/test.sh leaves it out; by hand: ctest -L kernel-hw (root,
# the guest image built).
add_library(hw_check STATIC ${CMAKE_CURRENT_LIST_DIR}/hw/hw_check.c)
foreach(_b vfio uio)
  add_executable(hw_${_b}_edu ${CMAKE_CURRENT_LIST_DIR}/hw/${_b}_edu.c)
  target_link_libraries(hw_${_b}_edu PRIVATE ernic_access hw_check)
endforeach()
add_test(NAME kernel_hw COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hw/kernel_hw.sh
  $<TARGET_FILE:hw_vfio_edu> $<TARGET_FILE:hw_uio_edu>)
set_tests_properties(kernel_hw PROPERTIES LABELS kernel-hw
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 900)

# Hardware in the loop (issue 17): the provider in that guest, on its UIO
# backend, drives the ERNIC model on this host (ernic-vfpga) through two
# ivshmem-plain BARs backed by the virtual FPGA's window and DDR files;
# hil_relay carries its interrupt socket over TCP. Unmodified pingpong,
# ib_write_bw and ernic_check against a software ERNIC here, over a tap
# link. Label kernel-hw, by hand: ctest -L kernel-hw.
# The same guest has an ivshmem-doorbell bound to vfio-pci: MSI-X on the
# VFIO backend (hw_vfio_msix), its vectors raised by hil_ivshmem here.
add_executable(hil_relay ${CMAKE_CURRENT_LIST_DIR}/hw/hil_relay.c)
add_executable(hil_ivshmem ${CMAKE_CURRENT_LIST_DIR}/hw/ivshmem_srv.c)
target_link_libraries(hil_ivshmem PRIVATE ernic_common)
add_executable(hw_vfio_msix ${CMAKE_CURRENT_LIST_DIR}/hw/vfio_msix.c)
target_link_libraries(hw_vfio_msix PRIVATE ernic_access hw_check)
add_test(NAME hil COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hw/hil.sh
  $<TARGET_FILE:ernicctl> $<TARGET_FILE:hil_relay> $<TARGET_FILE:ernic_check>
  $<TARGET_FILE:hil_ivshmem> $<TARGET_FILE:hw_vfio_msix>)
set_tests_properties(hil PROPERTIES LABELS kernel-hw
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 900)

# hil_relay's framing on this host, no guest: in every CI run.
add_executable(test_hil_relay ${CMAKE_CURRENT_LIST_DIR}/hw/test_hil_relay.c)
target_link_libraries(test_hil_relay PRIVATE hw_check)
add_test(NAME hil_relay COMMAND test_hil_relay $<TARGET_FILE:hil_relay>)
set_tests_properties(hil_relay PROPERTIES TIMEOUT 60)
