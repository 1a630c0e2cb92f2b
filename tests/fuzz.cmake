# SPDX-License-Identifier: MIT
# Fuzz targets (tests/fuzz/), run briefly by ctest: FUZZ_SECONDS each
# (default 30) from seeds mkcorpus writes. scripts/fuzz.sh runs them for
# as long as you like. include()d from tests/CMakeLists.txt.
set(FUZZ_SECONDS 30 CACHE STRING "seconds each fuzz target runs in ctest")
if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  set(ERNIC_SOURCE_DIR ${CMAKE_SOURCE_DIR})
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/fuzz ${CMAKE_BINARY_DIR}/fuzz)
  set(_fz ${CMAKE_BINARY_DIR}/bin)
else()
  # libFuzzer is clang's: a project of its own, configured with clang.
  find_program(ERNIC_CLANG NAMES clang clang-14 REQUIRED)
  include(ExternalProject)
  ExternalProject_Add(ernic_fuzz
    SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/fuzz
    BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
    CMAKE_ARGS -DCMAKE_C_COMPILER=${ERNIC_CLANG}
               -DCMAKE_BUILD_TYPE=RelWithDebInfo
               -DCMAKE_RUNTIME_OUTPUT_DIRECTORY=${CMAKE_BINARY_DIR}/fuzz/bin
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON)
  set(_fz ${CMAKE_BINARY_DIR}/fuzz/bin)
endif()

set(_corpus ${CMAKE_BINARY_DIR}/fuzz-corpus)
add_test(NAME fuzz_seeds COMMAND ${_fz}/mkcorpus ${_corpus}/seeds)
set_tests_properties(fuzz_seeds PROPERTIES FIXTURES_SETUP fuzzseeds)
foreach(_t model_rx conf provider_rx cm)
  add_test(NAME fuzz_${_t}
    COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/fuzz.sh --run
            ${_fz}/fuzz_${_t} ${_corpus}/seeds/${_t} ${_corpus}/${_t}
            ${FUZZ_SECONDS})
  set_tests_properties(fuzz_${_t} PROPERTIES FIXTURES_REQUIRED fuzzseeds
    TIMEOUT 600)
endforeach()
