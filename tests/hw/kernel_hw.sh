#!/bin/bash
# SPDX-License-Identifier: MIT
# The hardware backends on real kernel drivers (ctest -L kernel-hw; by
# hand, not in CI): boots the ../shared/hwguest guest (QEMU TCG, q35 with
# an emulated Intel IOMMU, Debian's kernel), binds its second edu
# (00:06.0, a 64-bit DMA mask) to vfio-pci and runs hw_vfio_edu there,
# then checks that the IOMMU faulted the DMA hw_vfio_edu aimed at an
# IOVA it never mapped; binds its first edu (00:05.0) to uio_pci_generic
# and runs hw_uio_edu. Both are built on this host (the guest is the
# same Debian).
#   kernel_hw.sh HW_VFIO_EDU HW_UIO_EDU        (root)
# HWGUEST: the hwguest scripts' directory (default: the ../shared/hwguest
# beside this checkout); HWGUEST_WORK: its WORK (default /tmp/hwguest),
# where build-image.sh left the image.
set -uo pipefail
prog=${1:?usage: kernel_hw.sh HW_VFIO_EDU HW_UIO_EDU}
uprog=${2:?usage: kernel_hw.sh HW_VFIO_EDU HW_UIO_EDU}
here=$(cd "$(dirname "$0")" && pwd)
hwguest=${HWGUEST:-$here/../../../shared/hwguest}
export WORK=${HWGUEST_WORK:-/tmp/hwguest}
bdf=0000:00:06.0 ubdf=0000:00:05.0

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (QEMU, the guest's share)"
	exit 77
fi
if [ ! -x "$hwguest/start-guest.sh" ]; then
	echo "SKIP: no hwguest scripts at $hwguest (set HWGUEST)"
	exit 77
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "SKIP: qemu-system-x86_64 missing"
	exit 77
fi
if [ ! -e "$WORK/root.img" ]; then
	echo "SKIP: no guest image in $WORK: build it with $hwguest/build-image.sh"
	exit 77
fi
if [ -e "$WORK/run/qemu.pid" ] && kill -0 "$(cat "$WORK/run/qemu.pid")" 2>/dev/null; then
	echo "FAIL: a guest already runs from $WORK: stop it ($hwguest/stop-guest.sh)"
	exit 1
fi

fail=0
bad() { echo "FAIL: $*"; fail=1; }
in_guest() { bash "$hwguest/run-in-guest.sh" "$@"; }

trap 'bash "$hwguest/stop-guest.sh" >/dev/null 2>&1' EXIT
if ! bash "$hwguest/start-guest.sh" >"$WORK/start.log" 2>&1; then
	cat "$WORK/start.log"
	echo "FAIL: the guest did not boot"
	exit 1
fi
cp "$prog" "$WORK/share/hw_vfio_edu"
cp "$uprog" "$WORK/share/hw_uio_edu"
cp "$hwguest/bind.sh" "$WORK/share/bind.sh"

echo "guest: $(in_guest 'uname -r; ls /sys/kernel/iommu_groups | wc -l' | tr '\n' ' ')(kernel, IOMMU groups)"
out=$(in_guest "bash /mnt/host/bind.sh vfio-pci $bdf")
echo "$out"
grep -q -- "-> vfio-pci" <<<"$out" || bad "$bdf did not bind to vfio-pci"

# 2 MiB pages for the backend's big DMA blocks
in_guest 'echo 8 > /proc/sys/vm/nr_hugepages' >/dev/null
in_guest -t 600 "/mnt/host/hw_vfio_edu $bdf" >"$WORK/vfio_edu.out" 2>&1
rc=$?
cat "$WORK/vfio_edu.out"
[ "$rc" = 0 ] || bad "hw_vfio_edu in the guest: exit $rc"

# The DMA to an IOVA nobody mapped: a DMAR fault at that address.
iova=$(sed -n 's/^unmapped-iova: 0x//p' "$WORK/vfio_edu.out")
faults=$(in_guest 'dmesg' | grep -i "DMAR.*fault addr" || true)
printf 'dmesg: %s\n' "${faults:-(no DMAR fault)}"
if [ -n "$iova" ] && grep -qi "fault addr 0x0*$iova" <<<"$faults"; then
	echo "ok: the IOMMU faulted edu's write to unmapped IOVA 0x$iova"
else
	bad "no IOMMU fault for the unmapped IOVA 0x${iova:-?}"
fi

# The driver wants the device back: an unbind from vfio-pci while
# hw_vfio_edu holds it. vfio-pci asks (VFIO_PCI_REQ_IRQ_INDEX) and waits;
# the backend hears it and the program closes, so the unbind completes.
id=$(in_guest -b "/mnt/host/hw_vfio_edu $bdf --unbind")
for ((i = 0; i < 600; i++)); do
	grep -q "waiting for the driver's request" "$WORK/share/out/$id.out" 2>/dev/null && break
	sleep 0.1
done
t0=$(date +%s%N)
in_guest -t 120 "echo $bdf > /sys/bus/pci/drivers/vfio-pci/unbind; ls -l /sys/bus/pci/devices/$bdf/driver 2>&1 | tail -1" >"$WORK/unbind.out" 2>&1
t1=$(date +%s%N)
in_guest -w "$id" >"$WORK/vfio_unbind.out" 2>&1
rc=$?
grep -E "^(ok|FAIL|waiting)" "$WORK/vfio_unbind.out" | tail -3
[ "$rc" = 0 ] || bad "hw_vfio_edu --unbind: exit $rc"
if grep -q "No such file" "$WORK/unbind.out"; then
	echo "ok: the unbind completed in $(((t1 - t0) / 1000000)) ms, the device released"
else
	cat "$WORK/unbind.out"
	bad "the unbind did not complete"
fi

# The UIO backend on uio_pci_generic.
out=$(in_guest "bash /mnt/host/bind.sh uio_pci_generic $ubdf; ls /sys/bus/pci/devices/$ubdf/uio")
echo "$out"
uio=$(grep -o '^uio[0-9]*$' <<<"$out" | head -1)
[ -n "$uio" ] || bad "$ubdf did not bind to uio_pci_generic"
in_guest -t 300 "/mnt/host/hw_uio_edu $uio $ubdf" >"$WORK/uio_edu.out" 2>&1
rc=$?
cat "$WORK/uio_edu.out"
[ "$rc" = 0 ] || bad "hw_uio_edu in the guest: exit $rc"

[ "$fail" = 0 ] && echo "PASS: kernel_hw"
exit "$fail"
