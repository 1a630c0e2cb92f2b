#!/bin/bash
# SPDX-License-Identifier: MIT
# Recovery from packet loss between network namespaces, frame wire.
# Frame-mode ERNICs use AF_PACKET, which the inet hooks never see, so:
#  1. "switch": A and B are bridged through a third namespace M; a
#     bridge-family table there drops 1% of the forwarded RoCEv2
#     packets, both directions, silently (a lossy switch);
#  2. "egress": a netdev egress hook on A's port drops 1% of what A
#     sends: the sender's send() then fails with ENOBUFS, as it does
#     when a qdisc is full; the model must take that as a lost packet.
# Each runs ernic_check (the data check), ib_write_bw, ib_send_bw,
# ib_read_bw and ibv_rc_pingpong, and must see drops.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "network namespaces, nftables, mknod"
need_cmds ip nft ibv_rc_pingpong ibv_devices ib_write_bw ib_send_bw ib_read_bw ss
: "${ERNICCTL:?}" "${RDMAV_DRIVERS:?}" "${ERNIC_CHECK:?}"

A=ernic-loss-a M=ernic-loss-m B=ernic-loss-b
make_netns "$A" "$M" "$B"
veth_pair "$A" ernla 198.51.100.33/24 "$M" ernlma -
veth_pair "$B" ernlb 198.51.100.34/24 "$M" ernlmb -
ip -n "$M" link add br0 type bridge
ip -n "$M" link set ernlma master br0
ip -n "$M" link set ernlmb master br0
ip -n "$M" link set br0 up
netns_host a ernla0 198.51.100.33 "$A"
netns_host b ernlb0 198.51.100.34 "$B"

echo "==== 1. lossy switch (bridge forward hook in $M)"
LOSS_NS=$M LOSS_TABLE='bridge ernic_loss' LOSS_CHAIN=forward
loss_install 'type filter hook forward priority 0'
loss_suite netns-switch-loss b a 1024
ip netns exec "$M" nft delete table bridge ernic_loss

echo "==== 2. dropping egress (netdev egress hook on ernla in $A)"
LOSS_NS=$A LOSS_TABLE='netdev ernic_loss' LOSS_CHAIN=egress
loss_install 'type filter hook egress device "ernla" priority 0'
loss_suite netns-egress-loss b a 1024
finish
