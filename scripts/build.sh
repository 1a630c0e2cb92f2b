#!/bin/bash
# Configure and build into build/ (gcc); also prove the tree builds
# warning-free with clang (-Werror is on for both).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DBUILD_TESTING=ON >/dev/null
cmake --build build-clang -j"$(nproc)" >/dev/null
