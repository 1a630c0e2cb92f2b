#!/bin/bash
# The newcomer's demo: install dependencies, build, create two software
# ERNICs (demo0 on 127.0.0.2, demo1 on 127.0.0.3), move data between them
# with Debian's unmodified ib_write_bw (RDMA WRITE, 64 KiB messages) and
# print its bandwidth line; the devices are removed on exit. Root only
# (ernicctl makes /dev/infiniband nodes).
#   DEMO_SIZE=bytes (default 65536), DEMO_ITERS=n (default 2000),
#   DEMO_WIRE=udp|frame (default udp) change the run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root: ernicctl creates /dev/infiniband nodes" >&2
	exit 1
fi
size=${DEMO_SIZE:-65536} iters=${DEMO_ITERS:-2000} wire=${DEMO_WIRE:-udp}

scripts/deps.sh
scripts/build.sh >/dev/null
ERNICCTL=$PWD/build/bin/ernicctl
# shellcheck source=SCRIPTDIR/../tests/apps/lib.sh
source tests/apps/lib.sh # run_pair: server, client, timeouts, cleanup
eval "$("$ERNICCTL" env)"

define_host demo0 demo0 127.0.0.2
define_host demo1 demo1 127.0.0.3
add_device demo0 127.0.0.2 --wire "$wire" # removed at exit
add_device demo1 127.0.0.3 --wire "$wire"
"$ERNICCTL" list
echo
echo "ib_write_bw: demo1 (127.0.0.3) writes $size-byte messages into demo0 (127.0.0.2), $iters times"
run_pair demo demo0 demo1 \
	-- ib_write_bw -d demo0 -x 0 -F -s "$size" -n "$iters" -p @PORT@ \
	-- ib_write_bw -d demo1 -x 0 -F -s "$size" -n "$iters" -p @PORT@ @SERVER@ ||
	exit 1
awk '/^ #bytes/ { print; getline; print; found = 1 }
     END { exit !found }' "$PAIR_CLIENT_OUT" ||
	fail "no result line in ib_write_bw's output: $(cat "$PAIR_CLIENT_OUT")"
