#!/bin/bash
# SPDX-License-Identifier: MIT
# Unmodified ibv_rc_pingpong -c and perftest between the fixture's
# software ERNICs on a simulated non-coherent bus (ernicn0 = 127.0.0.62,
# ernicn1 = 127.0.0.63, `ernicctl add --noncoherent`): the IP keeps its
# own copy of all DMA memory, so only the provider's cache maintenance
# carries WQEs, CQEs, received data and READ responses across.
# ib_write_lat is left out on purpose: it polls the buffer the peer
# WRITEs, which no work request names, so on a non-coherent bus only the
# application could invalidate it (ernicdv_sync_mr); unmodified, it would
# wait for ever, as it would on such a board.
# Needs the fixture's devices (tests/devices.sh setup) and ctest's
# environment (ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH, RDMAV_DRIVERS).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ibv_rc_pingpong ib_write_bw ib_send_bw ib_read_bw ib_send_lat ib_read_lat ss
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

define_host nc0 ernicn0 127.0.0.62
define_host nc1 ernicn1 127.0.0.63
grep -qx 'coherent=0' "$SYSFS_PATH/class/infiniband/ernicn0/device/ernic.conf" ||
	fail "ernicn0 is not a non-coherent device"

pingpong_matrix noncoherent nc0 nc1 1024
for p in ib_write_bw ib_send_bw ib_read_bw; do
	perftest_case noncoherent nc0 nc1 "$p" 1000 -s 65536
done
for p in ib_send_lat ib_read_lat; do
	perftest_case noncoherent nc0 nc1 "$p" 1000 -s 64
done
finish
