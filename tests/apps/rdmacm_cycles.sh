#!/bin/bash
# SPDX-License-Identifier: MIT
# rdmacm_cycles (tests/rdmacm_cycles.c): 200 connect / disconnect cycles
# through our librdmacm in one process holding two software devices, a
# listener on one and the clients on the other; the fds, threads, heap
# and QPs after the last cycle must be those after the warm-up.
#   rdmacm_cycles.sh RDMACM_CYCLES LIBRDMACM [rdmacm_cycles options...]
#   environment: ERNICCTL; RDMACM_CYCLES_ARGS (more options)
# The devices are in an overlay of their own (ERNIC_RUNDIR under the
# work directory): ernicy0 on 127.0.0.76, ernicy1 on 127.0.0.77.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
prog=${1:?usage: rdmacm_cycles.sh RDMACM_CYCLES LIBRDMACM [options...]}
lib=${2:?usage: rdmacm_cycles.sh RDMACM_CYCLES LIBRDMACM [options...]}
shift 2
: "${ERNICCTL:?}"

add_local_devices ernicy0 127.0.0.76 ernicy1 127.0.0.77
[[ "$LD_LIBRARY_PATH" == */lib/rdmacm* ]] ||
	fail "ernicctl env did not put lib/rdmacm in LD_LIBRARY_PATH: $LD_LIBRARY_PATH"

# Without glibc's per-thread caches (they count as "in use") the heap
# figure is exact: 4 KiB over 190 cycles is less than one 32-byte block
# a cycle. ERNIC_CM_STATS: each CM's counters at exit (retransmissions,
# timeouts: a MAD lost on lo shows there).
# shellcheck disable=SC2086 # option words
GLIBC_TUNABLES=glibc.malloc.tcache_count=0 ERNIC_CM_STATS=1 timeout 280 \
	"$prog" -L "$lib" -n 200 -w 10 -m 4096 ${RDMACM_CYCLES_ARGS:-} "$@" \
	127.0.0.76 127.0.0.77 || fail "rdmacm_cycles failed (exit $?)"
echo "PASS"
