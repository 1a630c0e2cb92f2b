#!/bin/bash
# SPDX-License-Identifier: MIT
# The UIO path: unmodified ibv_rc_pingpong -c and perftest with one side
# and with both sides on the fixture's virtual-FPGA devices (ernicu0 =
# 127.0.0.52, ernicu1 = 127.0.0.53, driven through the provider's UIO
# backend) and the software device ernict1 (127.0.0.3) as the other peer.
# Needs the fixture's devices (tests/devices.sh setup) and ctest's
# environment (ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH, RDMAV_DRIVERS).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ibv_rc_pingpong ib_write_bw ib_send_bw ib_read_bw ib_write_lat ss
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

define_host uio0 ernicu0 127.0.0.52
define_host uio1 ernicu1 127.0.0.53
define_host sw1 ernict1 127.0.0.3
"$ERNICCTL" list | grep -q '^ernicu0 .* uio 127\.0\.0\.52 ' ||
	fail "ernicu0 is not a UIO-path device"

pingpong_matrix uio-sw uio0 sw1 1024
pingpong_matrix sw-uio sw1 uio0 1024
pingpong_matrix uio-uio uio0 uio1 1024
for p in ib_write_bw ib_send_bw ib_read_bw; do
	perftest_case uio-uio uio0 uio1 "$p" 1000 -s 65536
done
perftest_case uio-uio uio0 uio1 ib_write_lat 1000 -s 2
perftest_case uio-sw uio0 sw1 ib_write_bw 1000 -s 65536
finish
