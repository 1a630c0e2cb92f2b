#!/bin/bash
# SPDX-License-Identifier: MIT
# End-to-end test of ernicctl: the overlay files and their exact contents,
# the /dev/infiniband node, list/env/del, and that every failing command
# leaves the overlay and /dev/infiniband exactly as they were.
#   usage: ernicctl_test.sh PATH/TO/ernicctl
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (ernicctl creates /dev/infiniband nodes)"
	exit 77
fi
ERNICCTL=$(readlink -f "${1:?usage: $0 PATH/TO/ernicctl}")
WORK=$(mktemp -d /tmp/ernicctl-test.XXXXXX)
chmod 755 "$WORK" # the non-root checks run a copy from here
export ERNIC_RUNDIR=$WORK/run
SYS=$ERNIC_RUNDIR/sysfs
IB=$SYS/class/infiniband
UV=$SYS/class/infiniband_verbs

cleanup() {
	local name
	if [ -d "$UV" ]; then
		for name in $("$ERNICCTL" list 2>/dev/null | cut -d' ' -f1); do
			"$ERNICCTL" del "$name" >/dev/null 2>&1 || true
		done
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Everything a failed command must not touch.
snapshot() {
	find "$SYS" -printf '%p %y %m %s\n' 2>/dev/null | sort || true
	find /dev/infiniband -printf '%p %y %m %Hr\n' 2>/dev/null | sort || true
	stat -c '%n %F %t:%T' /dev/infiniband/* 2>/dev/null | sort || true
}

# expect_fail RC TEXT CMD...: CMD exits RC, its stderr's first line
# contains TEXT (one line only, unless the full usage is expected),
# nothing changed on disk.
expect_fail() {
	local want_rc=$1 text=$2 before after rc=0 err
	shift 2
	before=$(snapshot)
	err=$("$@" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = "$want_rc" ] || fail "'$*': exit $rc, want $want_rc ($err)"
	[[ "$(head -n1 <<<"$err")" == *"$text"* ]] ||
		fail "'$*': stderr '$err' does not contain '$text'"
	if ! grep -q '^Usage:' <<<"$err" && [ "$(wc -l <<<"$err")" != 1 ]; then
		fail "'$*': want one line on stderr, got: $err"
	fi
	after=$(snapshot)
	[ "$before" = "$after" ] ||
		fail "'$*' left changes behind: $(diff <(echo "$before") <(echo "$after"))"
	echo "ok: $* -> $want_rc"
}

# check_file PATH CONTENT: the file holds exactly CONTENT plus a newline.
check_file() {
	[ -f "$1" ] || fail "$1 missing"
	cmp -s "$1" <(printf '%s\n' "$2") ||
		fail "$1: '$(cat "$1")', want '$2'"
}

# uverbs index of NAME according to `list`.
uverbs_of() {
	"$ERNICCTL" list | awk -v n="$1" '$1 == n { sub("uverbs", "", $2); print $2 }'
}

check_device() { # NAME ADDR NETDEV GID0 [GUID]
	local name=$1 addr=$2 netdev=$3 gid0=$4 guid=${5:-} n d p k
	n=$(uverbs_of "$name")
	[ -n "$n" ] || fail "$name not listed"
	check_file "$UV/abi_version" 6
	check_file "$UV/uverbs$n/ibdev" "$name"
	check_file "$UV/uverbs$n/abi_version" 1
	check_file "$UV/uverbs$n/dev" 1:7
	check_file "$UV/uverbs$n/ernic_node_ino" "$(stat -c %i "/dev/infiniband/uverbs$n")"
	[ -c "/dev/infiniband/uverbs$n" ] || fail "/dev/infiniband/uverbs$n is not a char device"
	[ "$(stat -c '%t:%T %a' "/dev/infiniband/uverbs$n")" = "1:7 666" ] ||
		fail "/dev/infiniband/uverbs$n: $(stat -c '%t:%T %a' "/dev/infiniband/uverbs$n")"
	d=$IB/$name
	check_file "$d/node_type" "1: CA"
	if [ -n "$guid" ]; then
		check_file "$d/node_guid" "$guid"
	fi
	grep -Eqx '[0-9a-f]{4}(:[0-9a-f]{4}){3}' "$d/node_guid" ||
		fail "$d/node_guid: bad format"
	cmp -s "$d/node_guid" "$d/sys_image_guid" || fail "sys_image_guid != node_guid"
	check_file "$d/fw_ver" 3.1
	check_file "$d/hw_rev" 0x31
	check_file "$d/hca_type" ERNIC
	check_file "$d/board_id" XLNX_ERNIC_SW
	check_file "$d/node_desc" "$name software ERNIC on $netdev"
	check_file "$d/device/modalias" ernic:sw
	grep -qx "name=$name" "$d/device/ernic.conf" || fail "ernic.conf: no name"
	grep -qx "addr=$addr" "$d/device/ernic.conf" || fail "ernic.conf: no addr"
	grep -qx "netdev=$netdev" "$d/device/ernic.conf" || fail "ernic.conf: no netdev"
	grep -qx "node_guid=0x$(tr -d ':' <"$d/node_guid")" "$d/device/ernic.conf" ||
		fail "ernic.conf: node_guid differs from sysfs"
	p=$d/ports/1
	check_file "$p/state" "4: ACTIVE"
	check_file "$p/phys_state" "5: LinkUp"
	check_file "$p/link_layer" Ethernet
	check_file "$p/rate" "100 Gb/sec (4X EDR)"
	check_file "$p/lid" 0x0
	check_file "$p/sm_lid" 0x0
	check_file "$p/lid_mask_count" 0
	check_file "$p/sm_sl" 0
	check_file "$p/cap_mask" 0x00000000
	check_file "$p/pkeys/0" 0xffff
	check_file "$p/gids/0" "$gid0"
	check_file "$p/gid_attrs/ndevs/0" "$netdev"
	for k in $(seq 0 15); do
		[ "$k" = 0 ] || check_file "$p/gids/$k" 0000:0000:0000:0000:0000:0000:0000:0000
		check_file "$p/gid_attrs/types/$k" "RoCE v2"
		if [ "$k" != 0 ]; then
			[ -f "$p/gid_attrs/ndevs/$k" ] && [ ! -s "$p/gid_attrs/ndevs/$k" ] ||
				fail "$p/gid_attrs/ndevs/$k should be an empty file"
		fi
	done
	[ ! -e "$p/gids/16" ] || fail "more than 16 GIDs"
	echo "ok: $name files"
}

check_gone() { # NAME N
	[ ! -e "$IB/$1" ] || fail "$IB/$1 left behind"
	[ ! -e "$UV/uverbs$2" ] || fail "$UV/uverbs$2 left behind"
	[ ! -e "/dev/infiniband/uverbs$2" ] || fail "/dev/infiniband/uverbs$2 left behind"
	! "$ERNICCTL" list | grep -q "^$1 " || fail "$1 still listed"
}

# An address no interface of this host owns.
unused=
for a in 192.0.2.123 203.0.113.9 198.51.100.77 10.255.254.253; do
	if ! ip -o route get "$a" 2>/dev/null | grep -q '^local'; then
		unused=$a
		break
	fi
done
[ -n "$unused" ] || fail "no non-local test address found"

# ---- usage and syntax ----
"$ERNICCTL" --help | grep -q '^Usage: ernicctl' || fail "--help"
"$ERNICCTL" -h | grep -q '^Usage: ernicctl' || fail "-h"
expect_fail 2 'Usage: ernicctl' "$ERNICCTL"
expect_fail 2 "unknown command 'frob'" "$ERNICCTL" frob
expect_fail 2 "unknown option '--bogus'" "$ERNICCTL" add e0 --sw 127.0.0.2 --bogus
expect_fail 2 "option '--sw' requires an argument" "$ERNICCTL" add e0 --sw
expect_fail 2 'missing --sw ADDR' "$ERNICCTL" add e0
expect_fail 2 'missing device NAME' "$ERNICCTL" add --sw 127.0.0.2
expect_fail 2 "unexpected argument 'e1'" "$ERNICCTL" add e0 e1 --sw 127.0.0.2
expect_fail 2 "option '--wire' requires an argument" "$ERNICCTL" add e0 --sw 127.0.0.2 --wire
for v in tcp UDP Frame "" "udp " raw; do
	expect_fail 2 "add: --wire must be 'udp' or 'frame', not '$v'" \
		"$ERNICCTL" add e0 --sw 127.0.0.2 --wire "$v"
done
expect_fail 2 "add: --wire given twice" "$ERNICCTL" add e0 --sw 127.0.0.2 --wire udp --wire=frame
# A bad --wire is a usage error even where the rest would fail later.
expect_fail 2 "add: --wire must be" "$ERNICCTL" add "e/0" --sw "$unused" --wire x
expect_fail 2 'missing device NAME' "$ERNICCTL" del
expect_fail 2 "unexpected argument 'x'" "$ERNICCTL" list x

# ---- list on an empty rundir prints nothing and creates nothing ----
[ -z "$("$ERNICCTL" list)" ] || fail "list of an empty rundir"
[ ! -e "$ERNIC_RUNDIR" ] || fail "list created $ERNIC_RUNDIR"

# ---- bad arguments: nothing half-created, even in a fresh rundir ----
long=$(printf 'n%.0s' $(seq 64))
expect_fail 1 "is not an address of this host" "$ERNICCTL" add e0 --sw "$unused"
expect_fail 1 "is not an IPv4 or IPv6 address" "$ERNICCTL" add e0 --sw 127.0.0.256
expect_fail 1 "is not an IPv4 or IPv6 address" "$ERNICCTL" add e0 --sw lo
expect_fail 1 "longer than 63 characters" "$ERNICCTL" add "$long" --sw 127.0.0.2
expect_fail 1 "may only contain" "$ERNICCTL" add "e/0" --sw 127.0.0.2
expect_fail 1 "may only contain" "$ERNICCTL" add "e 0" --sw 127.0.0.2
expect_fail 1 "may only contain" "$ERNICCTL" add "e.0" --sw 127.0.0.2
expect_fail 1 "must not be empty" "$ERNICCTL" add "" --sw 127.0.0.2
expect_fail 1 "unknown parameter 'C_FOO'" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_FOO=1
expect_fail 1 "unknown parameter 'c_num_qp'" "$ERNICCTL" add e0 --sw 127.0.0.2 --param c_num_qp=8
expect_fail 1 "expected NAME=VALUE" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_NUM_QP
for v in 7 256 -8 +8 " 8" 8x 0x10 "" 99999999999999999999; do
	expect_fail 1 "C_NUM_QP must be 8..255, not '$v'" \
		"$ERNICCTL" add e0 --sw 127.0.0.2 --param "C_NUM_QP=$v"
done
expect_fail 1 "C_M_AXI_ADDR_WIDTH must be 32 or 64" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_M_AXI_ADDR_WIDTH=48
expect_fail 1 "C_MAX_WR_RETRY_DATA_BUF_DEPTH must be 1..65535" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_MAX_WR_RETRY_DATA_BUF_DEPTH=0
expect_fail 1 "C_MAX_WR_RETRY_DATA_BUF_DEPTH must be 1..65535" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_MAX_WR_RETRY_DATA_BUF_DEPTH=65536
expect_fail 1 "C_EN_DEBUG_PORTS must be 0..1" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_EN_DEBUG_PORTS=2
expect_fail 1 "C_NUM_QP given twice" "$ERNICCTL" add e0 --sw 127.0.0.2 --param C_NUM_QP=8 --param C_NUM_QP=9
expect_fail 1 "no device named 'e0'" "$ERNICCTL" del e0

# ---- not root ----
mkdir "$WORK/bin"
cp "$ERNICCTL" "$WORK/bin/ernicctl"
chmod 755 "$WORK/bin" "$WORK/bin/ernicctl"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
expect_fail 1 'ernicctl: must be run as root' asnobody "$WORK/bin/ernicctl" add e0 --sw 127.0.0.2
expect_fail 1 'ernicctl: must be run as root' asnobody "$WORK/bin/ernicctl" del e0
expect_fail 2 "add: --wire must be" asnobody "$WORK/bin/ernicctl" add e0 --sw 127.0.0.2 --wire ip

# ---- rollback: a failure after the overlay was built undoes all of it ----
if unshare -m true 2>/dev/null; then
	# A private /dev where /dev/infiniband is a file makes mknod fail
	# after class/infiniband/NAME has been created.
	expect_fail 1 'cannot create /dev/infiniband/uverbs0: Not a directory' \
		unshare -m --propagation private sh -c \
		'mount -t tmpfs none /dev && touch /dev/infiniband && exec "$0" add rb0 --sw 127.0.0.5' \
		"$ERNICCTL"
	[ ! -e "$SYS" ] || fail "rollback left $SYS"
else
	echo "note: unshare -m unavailable, rollback case not run"
fi

# ---- add IPv4 on lo ----
"$ERNICCTL" add ernic0 --sw 127.0.0.2
check_device ernic0 127.0.0.2 lo 0000:0000:0000:0000:0000:ffff:7f00:0002 0200:0000:7f00:0002
n0=$(uverbs_of ernic0)
grep -qx 'C_NUM_QP=64' "$IB/ernic0/device/ernic.conf" || fail "default C_NUM_QP"
grep -qx 'wire=udp' "$IB/ernic0/device/ernic.conf" || fail "default wire is not udp"

# ---- add IPv6 (::1) with parameters ----
"$ERNICCTL" add ernic6 --sw ::1 --param C_NUM_QP=8 --wire frame --param=C_EN_DEBUG_PORTS=1
check_device ernic6 ::1 lo 0000:0000:0000:0000:0000:0000:0000:0001 0200:0000:6869:1772
n6=$(uverbs_of ernic6)
grep -qx 'C_NUM_QP=8' "$IB/ernic6/device/ernic.conf" || fail "--param C_NUM_QP"
grep -qx 'C_EN_DEBUG_PORTS=1' "$IB/ernic6/device/ernic.conf" || fail "--param C_EN_DEBUG_PORTS"
grep -qx 'wire=frame' "$IB/ernic6/device/ernic.conf" || fail "--wire frame"
[ "$(grep -c '^wire=' "$IB/ernic6/device/ernic.conf")" = 1 ] || fail "wire= written twice"
[ "$n0" != "$n6" ] || fail "two devices share uverbs$n0"

# ---- a 63-character name is fine ----
max=$(printf 'm%.0s' $(seq 63))
"$ERNICCTL" add "$max" --sw 127.0.0.4 --wire=udp
check_device "$max" 127.0.0.4 lo 0000:0000:0000:0000:0000:ffff:7f00:0004

# ---- duplicates ----
expect_fail 1 "device 'ernic0' already exists" "$ERNICCTL" add ernic0 --sw 127.0.0.3
expect_fail 1 "address 127.0.0.2 is already used by device 'ernic0'" "$ERNICCTL" add other --sw 127.0.0.2
expect_fail 1 "address ::1 is already used by device 'ernic6'" "$ERNICCTL" add other --sw 0::1

# ---- list and env ----
want=$(printf '%s\n' "ernic0 uverbs$n0 sw 127.0.0.2 lo udp" "ernic6 uverbs$n6 sw ::1 lo frame" \
	"$max uverbs$(uverbs_of "$max") sw 127.0.0.4 lo udp" | sort -t' ' -k2.7n)
[ "$("$ERNICCTL" list)" = "$want" ] || fail "list: $("$ERNICCTL" list)"
[ "$(asnobody "$WORK/bin/ernicctl" list)" = "$want" ] || fail "list as nobody"
# A device whose ernic.conf no longer parses (here: an unknown wire) is
# still listed, with a warning, so that it can be deleted.
conf6=$IB/ernic6/device/ernic.conf
cp "$conf6" "$WORK/conf6.bak"
sed -i 's/^wire=.*/wire=tcp/' "$conf6"
out=$("$ERNICCTL" list 2>"$WORK/list.err")
grep -qx "ernic6 uverbs$n6 sw ? ? ?" <<<"$out" || fail "list with a bad ernic.conf: $out"
grep -q "warning: ernic6 has no valid ernic.conf" "$WORK/list.err" ||
	fail "list: no warning for a bad ernic.conf: $(cat "$WORK/list.err")"
cp "$WORK/conf6.bak" "$conf6"
libdir=$(dirname "$(dirname "$ERNICCTL")")/lib
[ "$("$ERNICCTL" env)" = "export SYSFS_PATH=$SYS RDMAV_DRIVERS=$libdir/libernic LD_PRELOAD=$libdir/libernic-preload.so\"\${LD_PRELOAD:+:\$LD_PRELOAD}\" LD_LIBRARY_PATH=$libdir/rdmacm\"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\"" ] ||
	fail "env: $("$ERNICCTL" env)"
(cd "$WORK" && ERNIC_RUNDIR=run "$ERNICCTL" env | grep -q "SYSFS_PATH=$SYS ") ||
	fail "env with a relative ERNIC_RUNDIR"

# libibverbs sees the devices once the provider is built (informational:
# the provider has its own tests).
if [ -e "$libdir/libernic-rdmav34.so" ] && command -v ibv_devices >/dev/null; then
	(eval "$("$ERNICCTL" env)"; ibv_devices) | grep -q ernic0 &&
		echo "ok: ibv_devices lists ernic0" ||
		echo "note: ibv_devices does not list ernic0"
fi

# ---- hardware ERNICs (--uio, --vfio): configuration only ----
hw=(--addr 10.9.8.7 --mac 02:00:00:00:00:07 --netdev lo)
expect_fail 2 "give one of --sw, --sim-uio, --uio, --vfio" \
	"$ERNICCTL" add h0 --sw 127.0.0.2 --vfio 0000:01:00.0
expect_fail 2 "give one of --sw, --sim-uio, --uio, --vfio" \
	"$ERNICCTL" add h0 --uio uio0 --vfio 0000:01:00.0 "${hw[@]}"
expect_fail 2 "--vfio needs --addr ADDR, --mac MAC and --netdev NETDEV" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --addr 10.9.8.7
expect_fail 2 "missing: --addr" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --mac 02:00:00:00:00:07 --netdev lo
expect_fail 2 "--uio needs --addr ADDR" \
	"$ERNICCTL" add h0 --uio uio0 --mac 02:00:00:00:00:07 --netdev lo
expect_fail 2 "missing: --mac --netdev" "$ERNICCTL" add h0 --uio uio0 --addr 10.9.8.7
expect_fail 2 "--wire is for software ERNICs" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 "${hw[@]}" --wire udp
expect_fail 2 "are for --uio and --vfio" "$ERNICCTL" add h0 --sw 127.0.0.2 --bar 1
expect_fail 2 "are for --uio and --vfio" \
	"$ERNICCTL" add h0 --sw 127.0.0.2 --vfio-root /tmp
expect_fail 2 "--bar, --offset, --vfio-root and --share-mib are for --vfio" \
	"$ERNICCTL" add h0 --uio uio0 "${hw[@]}" --bar 1
expect_fail 2 "--bar, --offset, --vfio-root and --share-mib are for --vfio" \
	"$ERNICCTL" add h0 --uio uio0 "${hw[@]}" --vfio-root /tmp
expect_fail 2 "--dma-map, --udmabuf and --uio-root are for --uio" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 "${hw[@]}" --udmabuf udmabuf0
expect_fail 2 "--dma-map, --udmabuf and --uio-root are for --uio" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 "${hw[@]}" --uio-root /tmp
expect_fail 2 "--bar given twice" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 "${hw[@]}" --bar 1 --bar 2
expect_fail 2 "unknown option '--root'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 "${hw[@]}" --root /tmp
expect_fail 1 "vfio must be a PCI address DDDD:BB:DD.F, not '0000:01:00.8'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.8 "${hw[@]}"
expect_fail 1 "vfio must be a PCI address DDDD:BB:DD.F, not '0000:1:00.0'" \
	"$ERNICCTL" add h0 --vfio 0000:1:00.0 "${hw[@]}"
expect_fail 1 "vfio_bar must be a BAR 0..5, not '6'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --bar 6 "${hw[@]}"
expect_fail 1 "vfio_bar must be a BAR 0..5, not 'x'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --bar x "${hw[@]}"
expect_fail 1 "vfio_offset must be a 4 KiB aligned byte offset, not '0x800'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --offset 0x800 "${hw[@]}"
expect_fail 1 "vfio_offset must be a 4 KiB aligned byte offset, not '010000'" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --offset 010000 "${hw[@]}"
expect_fail 1 "vfio_root must be an absolute path" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --vfio-root rel "${hw[@]}"
expect_fail 1 "uio must be a UIO device name" "$ERNICCTL" add h0 --uio a/b "${hw[@]}"
expect_fail 1 "'10.9.8' is not an IPv4 or IPv6 address" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --addr 10.9.8 --mac 02:00:00:00:00:07 \
	--netdev lo
expect_fail 1 "'02:00:00:00:07' is not a MAC address" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --addr 10.9.8.7 --mac 02:00:00:00:07 --netdev lo
expect_fail 1 "no netdev 'ernic-nope' on this host" \
	"$ERNICCTL" add h0 --vfio 0000:01:00.0 --addr 10.9.8.7 --mac 02:00:00:00:00:07 \
	--netdev ernic-nope
# A VFIO device gets a broker too, which must open it: here there is
# none. --alone: the configuration only.
expect_fail 1 "the device's broker did not start: ernic-broker: h0: vfio 0000:3b:00.1: " \
	"$ERNICCTL" add h0 --vfio 3b:00.1 --bar 2 --offset 0x80000 --vfio-root /opt/fake \
	--share-mib 64 "${hw[@]}"
"$ERNICCTL" list | grep -q '^h0 ' && fail "h0 left in the overlay after its broker failed"
expect_fail 2 "--bar, --offset, --vfio-root and --share-mib are for --vfio" \
	"$ERNICCTL" add h0 --uio uio3 --share-mib 64 "${hw[@]}"
expect_fail 2 "--share-mib is what a broker shares: not with --alone" \
	"$ERNICCTL" add h0 --vfio 3b:00.1 --share-mib 64 --alone "${hw[@]}"
expect_fail 1 "vfio_share_mib must be 1..65536" \
	"$ERNICCTL" add h0 --vfio 3b:00.1 --share-mib 0 "${hw[@]}"
"$ERNICCTL" add h0 --vfio 3b:00.1 --bar 2 --offset 0x80000 --vfio-root /opt/fake \
	--alone "${hw[@]}"
# A UIO device gets a broker, which must open it: here there is none.
expect_fail 1 "the device's broker did not start: ernic-broker: h1: uio: no UIO device 'uio3' under /opt/fake/sys/class/uio" \
	"$ERNICCTL" add h1 --uio uio3 --udmabuf udmabuf0 --noncoherent --addr 10.9.8.8 \
	--mac 02:00:00:00:00:08 --netdev lo --uio-root /opt/fake
"$ERNICCTL" list | grep -q '^h1 ' && fail "h1 left in the overlay after its broker failed"
expect_fail 2 "--alone is for --uio, --vfio and --sim-uio" "$ERNICCTL" add h3 --sw 127.0.0.2 --alone
"$ERNICCTL" add h1 --uio uio3 --udmabuf udmabuf0 --noncoherent --addr 10.9.8.8 \
	--mac 02:00:00:00:00:08 --netdev lo --uio-root /opt/fake --alone
"$ERNICCTL" add h2 --vfio 0000:01:00.0 --offset 4096 --noncoherent \
	--addr fd00::7 --mac 02:00:00:00:00:09 --netdev lo --alone
"$ERNICCTL" list | grep -qx 'h0 uverbs[0-9]* vfio 10\.9\.8\.7 lo udp' || fail "list: h0 as vfio"
"$ERNICCTL" list | grep -qx 'h1 uverbs[0-9]* uio 10\.9\.8\.8 lo udp' || fail "list: h1 as uio"
"$ERNICCTL" list | grep -qx 'h2 uverbs[0-9]* vfio fd00::7 lo udp' || fail "list: h2 as vfio"
conf=$IB/h0/device/ernic.conf
for kv in backend=vfio vfio=0000:3b:00.1 vfio_bar=2 vfio_offset=0x80000 \
	vfio_root=/opt/fake addr=10.9.8.7 mac=02:00:00:00:00:07 netdev=lo coherent=1; do
	grep -qx "$kv" "$conf" || fail "h0: no '$kv' in ernic.conf"
done
! grep -q '^uio' "$conf" || fail "h0: UIO keys in a VFIO ernic.conf"
for kv in backend=uio uio=uio3 udmabuf=udmabuf0 uio_root=/opt/fake coherent=0; do
	grep -qx "$kv" "$IB/h1/device/ernic.conf" || fail "h1: no '$kv' in ernic.conf"
done
! grep -q '^vfio' "$IB/h1/device/ernic.conf" || fail "h1: VFIO keys in a UIO ernic.conf"
for kv in vfio=0000:01:00.0 vfio_bar=0 vfio_offset=0x1000 vfio_share_mib=256 coherent=0; do
	grep -qx "$kv" "$IB/h2/device/ernic.conf" || fail "h2: no '$kv' in ernic.conf"
done
! grep -q '^vfio_root' "$IB/h2/device/ernic.conf" || fail "h2: vfio_root without --vfio-root"
[ "$(cat "$IB/h0/device/modalias")" = ernic:vfio ] || fail "h0 modalias"
[ "$(cat "$IB/h1/device/modalias")" = ernic:uio ] || fail "h1 modalias"
[ ! -e "$ERNIC_RUNDIR/vfpga/h0" ] && [ ! -e "$ERNIC_RUNDIR/vfpga/h1" ] &&
	[ ! -e "$ERNIC_RUNDIR/broker/h0" ] && [ ! -e "$ERNIC_RUNDIR/broker/h1" ] ||
	fail "add --vfio or --uio --alone started something"
expect_fail 1 "device 'h0' already exists" "$ERNICCTL" add h0 --vfio 0000:01:00.0 --alone "${hw[@]}"
for d in h0 h1 h2; do "$ERNICCTL" del "$d"; done
echo "ok: --vfio --alone and --uio --alone write their configuration and start nothing"

# ---- concurrent adds are serialised by the lock ----
pids=()
for i in 1 2 3 4; do
	"$ERNICCTL" add "par$i" --sw "127.0.1.$i" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "concurrent add failed"; done
[ "$("$ERNICCTL" list | grep -c '^par')" = 4 ] || fail "concurrent adds"
[ "$("$ERNICCTL" list | cut -d' ' -f2 | sort | uniq -d)" = "" ] ||
	fail "concurrent adds share a uverbs index"
for i in 1 2 3 4; do "$ERNICCTL" del "par$i"; done

# ---- del ----
n=$(uverbs_of "$max")
"$ERNICCTL" del "$max"
check_gone "$max" "$n"
"$ERNICCTL" del ernic6
check_gone ernic6 "$n6"
# /dev/infiniband is every overlay's: a node of ernic0's name made since
# by someone else (another overlay, once ernic0's was gone) is not
# ernic0's to remove.
node0=/dev/infiniband/uverbs$n0
rm -f "$node0"
mknod -m 666 "$node0" c 1 7
"$ERNICCTL" del ernic0
[ -c "$node0" ] || fail "del ernic0 removed $node0, a node it did not make"
rm -f "$node0"
check_gone ernic0 "$n0"
echo "ok: del leaves a node of the same name that another overlay made"
expect_fail 1 "no device named 'ernic0'" "$ERNICCTL" del ernic0
[ -z "$("$ERNICCTL" list)" ] || fail "list after del"
[ -z "$(ls -A "$IB")" ] && [ "$(ls -A "$UV")" = abi_version ] ||
	fail "overlay not empty after del: $(find "$SYS")"

echo "PASS"
