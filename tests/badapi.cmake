# SPDX-License-Identifier: MIT
# Bad-API-input matrix: every verb called with invalid arguments, each
# case in a forked child (test_badapi.h); include()d from
# tests/CMakeLists.txt. BADAPI_DEV / BADAPI_PEER name other devices,
# BADAPI_CASE=<glob> runs some cases only.
add_executable(test_badapi ${CMAKE_CURRENT_LIST_DIR}/test_badapi.c
  ${CMAKE_CURRENT_LIST_DIR}/test_badapi_mr.c
  ${CMAKE_CURRENT_LIST_DIR}/test_badapi_res.c
  ${CMAKE_CURRENT_LIST_DIR}/test_badapi_modify.c
  ${CMAKE_CURRENT_LIST_DIR}/test_badapi_post.c
  ${CMAKE_CURRENT_LIST_DIR}/verbs_util.c)
target_link_libraries(test_badapi PRIVATE PkgConfig::CMOCKA PkgConfig::IBVERBS
  ernic)
add_test(NAME badapi COMMAND test_badapi)
# Again on the fixture's software ERNICs that simulate a non-coherent
# bus: registration copies the buffer there, so it must be checked first.
add_test(NAME badapi_noncoherent COMMAND test_badapi)
set_tests_properties(badapi PROPERTIES FIXTURES_REQUIRED ernicdevs
  ENVIRONMENT "${ERNIC_TEST_ENV}" SKIP_RETURN_CODE 77 RUN_SERIAL ON
  TIMEOUT 900)
set_tests_properties(badapi_noncoherent PROPERTIES FIXTURES_REQUIRED
  ernicdevs ENVIRONMENT
  "${ERNIC_TEST_ENV};BADAPI_DEV=ernicn0;BADAPI_PEER=ernicn1"
  SKIP_RETURN_CODE 77 RUN_SERIAL ON TIMEOUT 900)
