#!/bin/bash
# SPDX-License-Identifier: MIT
# What the software ERNICs put on the wire, captured with dumpcap on lo:
# ibv_rc_pingpong and perftest (SEND, RDMA WRITE, RDMA READ, in one
# packet and segmented) between the fixture's UDP-wire devices (ernict0,
# ernict1), then between two frame-wire devices made here (ernicf0 =
# 127.0.0.42, ernicf1 = 127.0.0.43). Each capture must decode in tshark
# as InfiniBand with no malformed packet or error, contain every RC
# opcode the traffic needs, and pass icrc_check (every ICRC verified,
# also of every packet in the UDP wire's GSO trains).
#   usage: capture.sh PATH/TO/icrc_check
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "packet capture, mknod"
need_cmds dumpcap tshark ibv_rc_pingpong ib_write_bw ib_send_bw ib_read_bw \
	ib_write_lat ib_read_lat ss
: "${ERNICCTL:?}" "${SYSFS_PATH:?}"
ICRC_CHECK=$(readlink -f "${1:?usage: $0 PATH/TO/icrc_check}")

# The UDP wire sends a message's packets as UDP GSO trains, which lo
# carries whole: dumpcap sees one frame per train, which icrc_check
# cuts up (check_capture).
define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
captured lo-udp udp0 udp1 4096 udp0 lo 0

define_host frame0 ernicf0 127.0.0.42
define_host frame1 ernicf1 127.0.0.43
add_device frame0 127.0.0.42 --wire frame
add_device frame1 127.0.0.43 --wire frame
captured lo-frame frame0 frame1 4096 frame0 lo 1
finish
