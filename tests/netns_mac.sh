#!/bin/bash
# Two network namespaces joined by a veth pair; a software ERNIC in the
# first; run test_netns there. Everything is removed on exit.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (network namespaces, mknod)"
	exit 77
fi
: "${ERNICCTL:?}" "${1:?usage: $0 TEST_BINARY}"
a=ernic-test-a b=ernic-test-b
cleanup() {
	ip netns exec $a "$ERNICCTL" del ernictm 2>/dev/null || true
	ip netns del $a 2>/dev/null || true
	ip netns del $b 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add $a
ip netns add $b
ip link add ernva netns $a address 02:00:5e:10:20:30 type veth \
	peer name ernvb netns $b address 02:00:5e:10:20:31
ip -n $a addr add 198.51.100.7/24 dev ernva
ip -n $b addr add 198.51.100.8/24 dev ernvb
ip -n $a link set ernva up
ip -n $b link set ernvb up
ip -n $a link set lo up
ip netns exec $a "$ERNICCTL" add ernictm --sw 198.51.100.7
ip netns exec $a "$1"
