# SPDX-License-Identifier: MIT
# Cross build for the Zynq MPSoC's CPU (aarch64) with Debian's cross
# toolchain and the arm64 -dev packages installed through multiarch
# (scripts/deps-aarch64.sh). Programs the build makes run under
# qemu-user: ctest and add_test() prefix them with the emulator.
#   cmake -S . -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# The arm64 .pc files of multiarch, not the host's.
set(PKG_CONFIG_EXECUTABLE aarch64-linux-gnu-pkg-config CACHE FILEPATH "")
# The arm64 glibc of multiarch (/lib/aarch64-linux-gnu), the libraries
# were linked against: "-L /usr/aarch64-linux-gnu" would mix the cross
# toolchain's ld.so with it, and threads hang at their creation.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Debian 12's libisal-dev:arm64 would replace the host's (not Multi-Arch:
# same): the model's ICRC uses zlib's CRC32 here.
set(ERNIC_WITH_ISAL OFF CACHE BOOL "")
