#!/bin/bash
# Unmodified ibverbs-utils from Debian see the software ERNICs.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (devices are made with mknod)"
	exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$(ibv_devices)
echo "$out"
for d in ernict0 ernict1 ernict6; do
	grep -qw "$d" <<<"$out" || fail "ibv_devices does not list $d"
done

info=$(ibv_devinfo -v -d ernict0)
echo "$info"
grep -Eq '^\s*state:\s*PORT_ACTIVE' <<<"$info" || fail "port not ACTIVE"
grep -Eq '^\s*link_layer:\s*Ethernet' <<<"$info" || fail "link layer"
grep -Eq 'GID\[ *0\]:\s*::ffff:127\.0\.0\.2, RoCE v2' <<<"$info" ||
	fail "GID 0 is not ::ffff:127.0.0.2 RoCE v2"
grep -Eq '^\s*fw_ver:\s*3\.1' <<<"$info" || fail "fw_ver"
grep -Eq 'max_qp:\s*63' <<<"$info" || fail "max_qp"

info6=$(ibv_devinfo -v -d ernict6)
grep -Eq 'GID\[ *0\]:\s*::1, RoCE v2' <<<"$info6" || fail "ernict6 GID"

# A device that does not exist is an error, not an empty answer.
if ibv_devinfo -d nosuchdev >/dev/null 2>&1; then
	fail "ibv_devinfo accepted an unknown device"
fi
echo "PASS"
