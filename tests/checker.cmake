# SPDX-License-Identifier: MIT
# ernic_check: the byte-exact RC traffic checker (tests/checker/, only
# libibverbs: it runs unchanged on any verbs device), app_checker, which
# runs it between the fixture's devices, and app_faults, its fault tests
# (peer killed, frozen, restarted with the same QPNs); include()d from
# tests/CMakeLists.txt.
add_executable(ernic_check
  ${CMAKE_CURRENT_LIST_DIR}/checker/main.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/proto.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/script.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/verbs.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/post.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/verify.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/run.c
  ${CMAKE_CURRENT_LIST_DIR}/checker/serve.c)
# dlopen/dl_iterate_phdr: ernicdv_sync_mr is looked up at run time.
target_link_libraries(ernic_check PRIVATE PkgConfig::IBVERBS ${CMAKE_DL_LIBS})

add_test(NAME app_checker
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/apps/checker.sh
          $<TARGET_FILE:ernic_check>)
set_tests_properties(app_checker PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 300)

# About a minute; the bound is for a loaded 2-CPU machine.
add_test(NAME app_faults
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/apps/faults.sh
          $<TARGET_FILE:ernic_check>)
set_tests_properties(app_faults PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 300)

# One device, many processes: four ib_write_bw pairs, the checker in
# three pairs with one client killed, 200 openers, rping beside
# ib_write_bw (docs/multiprocess.md); on software devices, and on virtual
# FPGAs shared through their brokers.
add_test(NAME app_share
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/apps/share.sh
          $<TARGET_FILE:ernic_check> sw)
add_test(NAME app_share_vfpga
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/apps/share.sh
          $<TARGET_FILE:ernic_check> vfpga)
set_tests_properties(app_share app_share_vfpga PROPERTIES
  FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 300)
