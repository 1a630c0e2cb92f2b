#!/bin/bash
# SPDX-License-Identifier: MIT
# Hardware in the loop (ctest hil, label kernel-hw; by hand, not in CI):
# the provider in a QEMU guest, on its UIO backend, drives the ERNIC
# model running on this host (ernic-vfpga) through real PCI BARs, and
# unmodified programs in the guest talk to a software ERNIC on this host
# over a tap link (docs/hardware.md, "Hardware in the loop").
#
#   host                                  guest (../shared/hwguest image)
#   ernicctl add hilfpga --sim-uio FPGA   ivshmem-plain 00:08.0 BAR2 = the
#     window  $VF/dev/uio0      ------->    window file: resource2 is dev/uio0
#     DDR     $VF/dev/udmabuf0  ------->  ivshmem-plain 00:09.0 BAR2 = DDR:
#                                           resource2 is dev/udmabuf0
#     interrupt $VF/dev/uio0.irq <- hil_relay (TCP over the tap) ->
#                                           hil_relay: dev/uio0.irq
#   ernicctl add hilsw --sw HOST          ernicctl add hil0 --uio uio0
#                                           --uio-root (that tree) --udmabuf
#   ibv_rc_pingpong, ib_write_bw,         the same programs, Debian's,
#   ernic_check servers on HOST           against HOST over the tap
#   hil_ivshmem: BAR 2 a file, MSI-X  --> ivshmem-doorbell 00:0a.0 on
#     vectors raised on request             vfio-pci: hw_vfio_msix
#
#   hil.sh ERNICCTL HIL_RELAY ERNIC_CHECK HIL_IVSHMEM HW_VFIO_MSIX   (root)
# HWGUEST: the hwguest scripts (default ../shared/hwguest beside this
# checkout); HWGUEST_WORK: where its build-image.sh left the image
# (default /tmp/hwguest); HIL_WORK: this run's files (default /tmp/hil).
set -uo pipefail
usage="usage: hil.sh ERNICCTL HIL_RELAY ERNIC_CHECK HIL_IVSHMEM HW_VFIO_MSIX"
ctl=${1:?$usage} relay=${2:?$usage} check=${3:?$usage} ivshmem=${4:?$usage}
msix=${5:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
hwguest=${HWGUEST:-$here/../../../shared/hwguest}
img=${HWGUEST_WORK:-/tmp/hwguest}
export WORK=${HIL_WORK:-/tmp/hil}
export TAP=${HIL_TAP:-hiltap0}
net=10.77.0
host_ip=$net.1 guest_ip=$net.2 fpga_ip=$net.3
relay_port=4795
export ERNIC_RUNDIR=$WORK/rundir
build=$(cd "$(dirname "$ctl")/.." && pwd)
run=$WORK/run share=$WORK/share
vf=$ERNIC_RUNDIR/vfpga/hilfpga

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (QEMU, a tap link, ernicctl)"
[ -x "$hwguest/run-in-guest.sh" ] || skip "no hwguest scripts at $hwguest (set HWGUEST)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing"
[ -e "$img/root.img" ] || skip "no guest image in $img: build it with $hwguest/build-image.sh"
for p in ibv_rc_pingpong ib_write_bw; do
	command -v $p >/dev/null || skip "$p missing (ibverbs-utils, perftest)"
done
if ip -4 route show | grep -v " dev $TAP " | grep -q "^$net\."; then
	skip "$net.0/24 is in use on this host"
fi
if [ -e "$run/qemu.pid" ] && kill -0 "$(cat "$run/qemu.pid")" 2>/dev/null; then
	echo "FAIL: a guest already runs from $WORK: WORK=$WORK $hwguest/stop-guest.sh"
	exit 1
fi

fail=0
bad() { echo "FAIL: $*"; fail=1; }
in_guest() { bash "$hwguest/run-in-guest.sh" "$@"; }
pids=()
# shellcheck disable=SC2317 # the EXIT trap calls it
cleanup() {
	bash "$hwguest/stop-guest.sh" >/dev/null 2>&1
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	"$ctl" del hilsw >/dev/null 2>&1
	"$ctl" del hilfpga >/dev/null 2>&1
}
trap cleanup EXIT

# The host side: the tap link, the virtual FPGA, the software ERNIC.
rm -rf "$WORK/rundir" "$share"
mkdir -p "$run" "$share/hil" "$ERNIC_RUNDIR"
ip link del "$TAP" 2>/dev/null
ip tuntap add dev "$TAP" mode tap || { echo "FAIL: no tap device"; exit 1; }
sysctl -q -w "net.ipv6.conf.$TAP.disable_ipv6=1"
ip addr add "$host_ip/24" dev "$TAP"
ip addr add "$fpga_ip/32" dev "$TAP"
ip link set "$TAP" up
"$ctl" add hilfpga --sim-uio "$fpga_ip" --alone || { echo "FAIL: ernicctl add hilfpga"; exit 1; }
"$ctl" add hilsw --sw "$host_ip" || { echo "FAIL: ernicctl add hilsw"; exit 1; }
henv=$("$ctl" env)	# for the host's programs only, not QEMU
"$relay" --listen "tcp:$host_ip:$relay_port" --connect "unix:$vf/dev/uio0.irq" \
	>"$WORK/relay.log" 2>&1 &
pids+=($!)
win_size=$(stat -c %s "$vf/dev/uio0")
ddr_size=$(stat -c %s "$vf/dev/udmabuf0")
echo "host: virtual FPGA on $fpga_ip (window $win_size bytes, DDR $((ddr_size >> 20)) MiB), software ERNIC hilsw on $host_ip"

# What the guest needs: this build's bin/ and lib/ (mounted where they
# are here: ernicctl finds its tree by its own path), the virtual FPGA's
# sysfs attributes, perftest.
mkdir -p "$share/hil/build" "$share/hil/perftest"
cp -a "$build/bin" "$build/lib" "$share/hil/build/"
cp -a "$vf/sys" "$share/hil/sys"
cp "$(command -v ib_write_bw)" "$share/hil/perftest/"
cp "$hwguest/bind.sh" "$share/hil/bind.sh"
cp "$msix" "$share/hil/hw_vfio_msix"

# The MSI-X function's server: its BAR 2 file, its vectors on request.
rm -f "$WORK/ivshmem.ctl"
mkfifo "$WORK/ivshmem.ctl"
"$ivshmem" "$WORK/ivshmem.sock" "$WORK/ivshmem.shm" 4194304 2 \
	<"$WORK/ivshmem.ctl" >"$WORK/ivshmem.log" 2>&1 &
pids+=($!)
exec 7>"$WORK/ivshmem.ctl"
for ((i = 0; i < 50; i++)); do [ -S "$WORK/ivshmem.sock" ] && break; sleep 0.1; done

# The guest: the image of ../shared/hwguest, with the tap link and the two
# ivshmem-plain devices whose BARs are the virtual FPGA's files.
for f in vmlinuz initrd.img root.img; do ln -sf "$img/$f" "$WORK/$f"; done
rm -rf "$share/cmd" "$share/out" "$share/ready"
mkdir -p "$share/cmd" "$share/out"
# shellcheck disable=SC2054 # commas inside one option's value
qemu=(qemu-system-x86_64 -machine q35 -accel tcg,thread=multi,tb-size=256 -cpu max
	-m 1024 -smp 2 -display none -nodefaults -no-reboot
	-device intel-iommu,intremap=on
	-kernel "$WORK/vmlinuz" -initrd "$WORK/initrd.img"
	-append "root=/dev/vda rw console=ttyS0 init=/sbin/peer-init panic=-1 peer.net=0 peer.rxe=0 net.ifnames=0 intel_iommu=on iommu=pt"
	-drive "file=$WORK/root.img,if=virtio,format=raw,snapshot=on"
	-virtfs "local,path=$share,mount_tag=hostshare,security_model=none,id=fs0"
	-netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no"
	-device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:02
	-object "memory-backend-file,id=win,share=on,mem-path=$vf/dev/uio0,size=$win_size"
	-device ivshmem-plain,memdev=win,addr=08.0
	-object "memory-backend-file,id=ddr,share=on,mem-path=$vf/dev/udmabuf0,size=$ddr_size"
	-device ivshmem-plain,memdev=ddr,addr=09.0
	-chardev "socket,path=$WORK/ivshmem.sock,id=ivsh"
	-device ivshmem-doorbell,chardev=ivsh,vectors=2,addr=0a.0
	-serial "file:$run/console.log" -monitor "unix:$run/mon.sock,server,nowait"
	-pidfile "$run/qemu.pid")
setsid "${qemu[@]}" </dev/null >"$run/qemu.out" 2>"$run/qemu.err" &
for ((i = 0; i < 900; i++)); do
	[ -e "$share/ready" ] && break
	if ! kill -0 "$(cat "$run/qemu.pid" 2>/dev/null)" 2>/dev/null && ((i > 10)); then
		cat "$run/qemu.err"
		echo "FAIL: QEMU exited"
		exit 1
	fi
	sleep 0.2
done
[ -e "$share/ready" ] || { tail -20 "$run/console.log"; echo "FAIL: the guest did not boot"; exit 1; }

cat >"$share/hil/setup.sh" <<EOF
set -e
# libibverbs reads the SYSFS_PATH overlay only where RDMA netlink is
# absent: keep ib_core out (udev would load it for the virtio NIC).
echo 'install ib_core /bin/false' >/etc/modprobe.d/noib.conf
modprobe -r rdma_ucm ib_uverbs rdma_rxe ib_core 2>/dev/null || true
modprobe virtio_net
for i in \$(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1
ip link set eth0 up
ip addr add $guest_ip/24 dev eth0
mkdir -p $build
mount --bind /mnt/host/hil/build $build
# The board's view of the virtual FPGA: its sysfs attributes, and its
# window and DDR as the BARs of the two ivshmem-plain functions.
R=/run/hil
mkdir -p \$R/dev
cp -a /mnt/host/hil/sys \$R/sys
for d in 08 09; do setpci -s 00:\$d.0 COMMAND=0x2:0x2; done
ln -s /sys/bus/pci/devices/0000:00:08.0/resource2 \$R/dev/uio0
ln -s /sys/bus/pci/devices/0000:00:09.0/resource2 \$R/dev/udmabuf0
setsid $build/bin/hil_relay --listen unix:\$R/dev/uio0.irq \\
	--connect tcp:$host_ip:$relay_port </dev/null >/tmp/relay.log 2>&1 &
for i in \$(seq 50); do [ -S \$R/dev/uio0.irq ] && break; sleep 0.1; done
! command -v ping >/dev/null || ping -c 1 -W 5 $host_ip >/dev/null
mkdir -p /dev/infiniband
export ERNIC_RUNDIR=/run/ernic
$build/bin/ernicctl add hil0 --uio uio0 --uio-root \$R --udmabuf udmabuf0 \\
	--addr $fpga_ip --mac 52:54:00:77:00:03 --netdev eth0
$build/bin/ernicctl list
EOF
cp "$relay" "$share/hil/build/bin/hil_relay"
genv="export ERNIC_RUNDIR=/run/ernic; eval \"\$($build/bin/ernicctl env)\"; export PATH=/mnt/host/hil/perftest:\$PATH"
if ! in_guest -t 300 'bash -x /mnt/host/hil/setup.sh' >"$WORK/setup.out" 2>&1; then
	cat "$WORK/setup.out"
	echo "FAIL: guest setup"
	exit 1
fi
grep -v '^+' "$WORK/setup.out"
out=$(in_guest "$genv; ibv_devinfo -d hil0")
grep -E "hca_id|state|transport" <<<"$out"
grep -q PORT_ACTIVE <<<"$out" || bad "ibv_devinfo in the guest: no active port"

# A host server, then its guest client once the server listens on its
# TCP port; both outputs kept.
pair() {	# NAME PORT 'host command' 'guest command' TIMEOUT
	local name=$1 port=$2 hcmd=$3 gcmd=$4 t=$5 hrc grc
	timeout "$t" bash -c "$henv; $hcmd" >"$WORK/$name.host" 2>&1 &
	local hp=$!
	for ((i = 0; i < 200; i++)); do
		[ -n "$(ss -Hltn "sport = :$port")" ] && break
		sleep 0.05
	done
	in_guest -t "$t" "$genv; $gcmd" >"$WORK/$name.guest" 2>&1
	grc=$?
	# A server whose client failed would wait for it until the timeout.
	[ "$grc" = 0 ] || { sleep 5; kill "$hp" 2>/dev/null; }
	wait "$hp"
	hrc=$?
	echo "== $name: host exit $hrc, guest exit $grc"
	if [ "$hrc" != 0 ] || [ "$grc" != 0 ]; then
		cat "$WORK/$name.host" "$WORK/$name.guest"
		bad "$name"
		return 1
	fi
}

pair pingpong 18515 "ibv_rc_pingpong -d hilsw -g 0 -s 4096 -n 500" \
	"ibv_rc_pingpong -d hil0 -g 0 -s 4096 -n 500 $host_ip" 300 &&
	grep -H "bytes in\|iters in" "$WORK/pingpong.host" "$WORK/pingpong.guest"
pair pingpong_events 18515 "ibv_rc_pingpong -d hilsw -g 0 -s 1024 -n 200 -e" \
	"ibv_rc_pingpong -d hil0 -g 0 -s 1024 -n 200 -e $host_ip" 300 &&
	grep -H "bytes in\|iters in" "$WORK/pingpong_events.host" "$WORK/pingpong_events.guest"
pair write_bw 18515 "ib_write_bw -d hilsw -x 0 -s 65536 -D 5" \
	"ib_write_bw -d hil0 -x 0 -s 65536 -D 5 $host_ip" 300 &&
	grep -A1 -H "#bytes" "$WORK/write_bw.guest"
pair checker 18600 "$check -d hilsw -p 18600" \
	"$build/bin/ernic_check -d hil0 -p 18600 -q 2 -n 300 -s 17 $host_ip" 600 &&
	grep -H "PASS\|FAIL" "$WORK/checker.host" "$WORK/checker.guest"

# MSI-X on the VFIO backend: ivshmem-doorbell on vfio-pci. The program
# says which vector it waits for; the host raises it.
out=$(in_guest "bash /mnt/host/hil/bind.sh vfio-pci 0000:00:0a.0")
echo "$out"
grep -q -- "-> vfio-pci" <<<"$out" || bad "00:0a.0 did not bind to vfio-pci"
id=$(in_guest -b "/mnt/host/hil/hw_vfio_msix 0000:00:0a.0")
for s in irq1 irq0 gone; do
	for ((i = 0; i < 600; i++)); do
		grep -q "^step: $s" "$share/out/$id.out" 2>/dev/null && break
		sleep 0.1
	done
	case $s in
	irq1) echo "irq 1" >&7 ;;
	irq0) echo "irq 0" >&7 ;;
	gone) echo "fill ff" >&7; echo "irq 0" >&7 ;;
	esac
done
in_guest -t 120 -w "$id" >"$WORK/msix.out" 2>&1
rc=$?
grep -v "^step:" "$WORK/msix.out"
[ "$rc" = 0 ] || bad "hw_vfio_msix in the guest: exit $rc"

[ "$fail" = 0 ] && echo "PASS: hil"
exit "$fail"
