# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# What every bench/ script begins with, sourced as
#   source "$(dirname "$0")/lib.sh" [PROGRAM...]
# root (ernicctl makes /dev/infiniband nodes), the build tree (BUILD_DIR,
# default build/; built when ernicctl or one of the PROGRAMs of its bin/
# is missing), ERNICCTL, and tests/apps/lib.sh (servers, clients, ports,
# cleanup at exit). Leaves the working directory at the source root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "bench: run as root: ernicctl creates /dev/infiniband nodes" >&2
	exit 1
fi
build=${BUILD_DIR:-build}
for _p in ernicctl "$@"; do
	if [ ! -x "$build/bin/$_p" ]; then
		scripts/build.sh >/dev/null
		break
	fi
done
ERNICCTL=$(readlink -f "$build/bin/ernicctl")
# shellcheck source=SCRIPTDIR/../tests/apps/lib.sh
source tests/apps/lib.sh
