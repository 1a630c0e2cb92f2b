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
