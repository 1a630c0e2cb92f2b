#!/bin/bash
# The whole test suite: dependencies, build, ctest. Run as root for the
# tests that create devices (others report themselves skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
cd build
# kernel-hw: a guest booted under TCG, run by hand (tests/hw.cmake)
exec ctest --output-on-failure -LE kernel-hw
