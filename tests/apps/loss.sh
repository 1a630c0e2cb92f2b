#!/bin/bash
# SPDX-License-Identifier: MIT
# Recovery from packet loss on lo: nftables drops 1% of the RoCEv2
# packets (UDP 4791) between the two devices' addresses at random, in a
# table of its own in the init namespace (inet ernic_app_loss, deleted on
# exit whatever happens), while ernic_check verifies every byte and
# unmodified ib_write_bw, ib_send_bw, ib_read_bw and
# ibv_rc_pingpong run between the fixture's UDP-wire devices ernict0
# (127.0.0.2) and ernict1 (127.0.0.3). The input hook drops silently,
# as a lossy link does. Fails if a program fails or nothing was dropped.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "nftables, mknod"
need_cmds nft ib_write_bw ib_send_bw ib_read_bw ibv_rc_pingpong ss
: "${ERNICCTL:?}" "${SYSFS_PATH:?}" "${ERNIC_CHECK:?}"

LOSS_NS='' LOSS_TABLE='inet ernic_app_loss' LOSS_CHAIN=input
# Only between the two devices: other tests may use lo meanwhile.
addrs='{ 127.0.0.2, 127.0.0.3 }'
loss_install 'type filter hook input priority -300' "ip saddr $addrs ip daddr $addrs"


define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
# perftest runs at the port MTU (4096 on lo); pingpong at 1024.
loss_suite lo-udp-loss udp0 udp1 1024
finish
