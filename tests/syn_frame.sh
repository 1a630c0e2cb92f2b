#!/bin/bash
# SPDX-License-Identifier: MIT
# PG332 Table 2-3's MAC/IPv4/UDP rows end to end (tests/test_syn_frame.c):
# two network namespaces joined by a veth pair, the frame-wire software
# ERNIC ernicsf in A on ernsfa, the crafted peer's end ernsfb in B, with
# the addresses and MACs test_syn_frame.c names. A veth pair rather than
# lo: real MACs (lo's are zeros, and a device there takes no frame by its
# MAC, so row 8's frame, to its MAC with another IP, would not be its own),
# the QP's remote MAC learnt by ARP (row 28), and nothing else on the
# link: frames sent on B's end arrive at A's end only. Everything is
# removed on exit.
#   usage: syn_frame.sh PATH/TO/test_syn_frame
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, AF_PACKET, mknod)"
	exit 77
fi
: "${ERNICCTL:?}" "${1:?usage: $0 PATH/TO/test_syn_frame}"
a=ernic-synf-a b=ernic-synf-b
cleanup() {
	ip netns exec "$a" "$ERNICCTL" del ernicsf 2>/dev/null || true
	ip netns del "$a" 2>/dev/null || true
	ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add "$a"
ip netns add "$b"
ip link add ernsfa netns "$a" address 02:00:5e:10:22:27 type veth \
	peer name ernsfb netns "$b" address 02:00:5e:10:22:28
ip -n "$a" addr add 198.51.100.27/24 dev ernsfa
ip -n "$b" addr add 198.51.100.28/24 dev ernsfb
ip -n "$a" link set ernsfa up
ip -n "$b" link set ernsfb up
ip -n "$a" link set lo up
ip -n "$b" link set lo up
ip netns exec "$a" "$ERNICCTL" add ernicsf --sw 198.51.100.27 --wire frame
ip netns exec "$a" "$1" "$b"
