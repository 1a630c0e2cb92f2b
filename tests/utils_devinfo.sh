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
# A corrupt device configuration: opening fails with a clear reason, and
# the device works again once the file is restored.
conf="$SYSFS_PATH/class/infiniband/ernict1/device/ernic.conf"
cp "$conf" "$conf.bak"
trap 'mv -f "$conf.bak" "$conf"' EXIT
sed -i 's/^C_NUM_QP=.*/C_NUM_QP=lots/' "$conf"
if err=$(ibv_devinfo -d ernict1 2>&1); then
	fail "ibv_devinfo opened a device with a corrupt configuration"
fi
echo "$err"
grep -q 'ernic.conf:[0-9]*: .*C_NUM_QP' <<<"$err" ||
	fail "no clear configuration error: $err"
mv -f "$conf.bak" "$conf"
trap - EXIT
ibv_devinfo -d ernict1 >/dev/null || fail "ernict1 broken after restore"
echo "PASS"
