#!/bin/bash
# SPDX-License-Identifier: MIT
# The app tests across two network namespaces joined by a veth pair
# (MTU 1500, so path MTU 1024), one frame-wire software ERNIC in each,
# each namespace with its own overlay: ibv_rc_pingpong -c over the size
# matrix, the six perftest programs with -a, and a capture on the veth
# checked by tshark and icrc_check; then 64 KiB bandwidth between B's
# frame-wire device and a UDP-wire one in A.
#   usage: netns.sh PATH/TO/icrc_check
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "network namespaces, mknod"
need_cmds ip dumpcap tshark ibv_rc_pingpong ibv_devices "${PERFTEST_PROGS[@]}" ss
: "${ERNICCTL:?}" "${RDMAV_DRIVERS:?}"
ICRC_CHECK=$(readlink -f "${1:?usage: $0 PATH/TO/icrc_check}")

A=ernic-app-a B=ernic-app-b
make_netns "$A" "$B"
veth_pair "$A" ernappa 198.51.100.17/24 "$B" ernappb 198.51.100.18/24
ip -n "$A" link set ernappa address 02:00:5e:10:21:17
ip -n "$B" link set ernappb address 02:00:5e:10:21:18
netns_host a ernappa0 198.51.100.17 "$A"
netns_host b ernappb0 198.51.100.18 "$B"

# Servers in B, clients in A.
pingpong_matrix netns-frame b a 1024
perftest_all netns-frame b a
captured netns-frame-capture b a 1024 a ernappa 1

# A UDP-wire device in A (a second address on the veth, A's overlay)
# and B's frame-wire one: the UDP wire sends the packets of a message
# as one GSO train, which the veth carries whole, as one frame, to B's
# AF_PACKET socket (model/wire_frame.h). WRITEs and SENDs from the UDP
# side, and READ responses to it.
ip -n "$A" addr add 198.51.100.19/24 dev ernappa
define_host au ernappu0 198.51.100.19 "$A" "${HOST_ENV[a]}"
add_device au 198.51.100.19
perftest_case netns-mixed b au ib_write_bw "${PERFTEST_ITERS:-200}" -s 65536
perftest_case netns-mixed b au ib_send_bw "${PERFTEST_ITERS:-200}" -s 65536
perftest_case netns-mixed au b ib_read_bw "${PERFTEST_ITERS:-200}" -s 65536
finish
