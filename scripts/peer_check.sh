#!/bin/bash
# SPDX-License-Identifier: MIT
# By hand, as root: ernic_check (tests/checker/) between a host software
# ERNIC and an independent RoCEv2 peer, the Linux kernel's rxe, in the
# QEMU guest of shared/peer (its README says how it works). The script
#   - boots the guest if it is not running (building its image if there
#     is none: about 4 minutes the first time, then about 30 s a boot);
#   - copies ernic_check into the guest (9p share) and checks it loads;
#   - creates a software ERNIC on the guest's tap in frame mode (rxe puts
#     the IPv4 ID inside the ICRC, so the model must write the IP header),
#     or with --wire udp on a UDP socket (the kernel writes the IP header;
#     the model predicts its ID: 0 for a DF datagram, 0, 1, 2, ... along
#     a GSO train the kernel splits before the tap);
#   - runs a fixed set of cases, each twice: server on the guest (rxe) and
#     server on the host (ERNIC); every case moves data both ways;
#   - prints a table and every PASS (or first FAIL) line, then removes the
#     device, the nftables table and the guest's tc filter. --stop also
#     powers the guest off (and removes its tap).
#
#   scripts/peer_check.sh [--stop] [--keep] [--capture-all] [--wire frame|udp] [--cases NAME,...] [--list]
#
# The cases (COMMON options first, so a case's own options win):
#   mixed-1qp, mixed-4qp, mixed-8qp  every opcode, sizes up to 64K
#   large-1M                         sizes up to 1 MiB
#   rnr        -r 1: receives run short on both sides, RNR NAKs both ways
#   loss       LOSS_PCT % (default 1) of RoCE packets dropped each way;
#              this run is captured and every ICRC checked (icrc_check,
#              shared/peer/roce-icrc.py), and tshark must decode it;
#              --capture-all does that for every run (kept with --keep,
#              or when something failed)
#
# Where the loss is made. Frame mode uses an AF_PACKET socket: the model
# sends around the IP output hook and sees received frames before any
# netfilter hook, ingress included. So host->guest packets are dropped by
# an nftables *netdev egress* chain on the tap (table netdev
# ernic_peer_check), and guest->host packets by a tc gact filter on the
# guest's eth0 egress (the guest has tc, not nft). Both count what they
# drop; the table shows it.
#
# Under TCG the guest is slow. The tap's queue is raised to 10000 packets
# for the run (at 1000 it dropped about half of the packets with -w 32
# and 64K messages; the "tapdrop" column shows such drops), the ack
# timeout is 1 s (--qp-timeout 18) and the send window 8.
#
# Environment: BUILD (build tree, default build/), PEER_DIR (default
# ../shared/peer from the repository), WORK (the peer's work directory,
# default /tmp/rxepeer), PEER_DEV (perni0), PEER_PORT (first TCP port,
# 25100), CASE_TIMEOUT (s per program, 300), LOSS_PCT (1..50).
# Exit status: 0 when every run passed, 1 otherwise, 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

usage() {
	sed -n '/^#   scripts/p' "$0" | sed 's/^#   /usage: /' >&2
	exit 2
}

STOP=0 KEEP=0 ONLY='' CAPTURE_ALL=0 WIRE=frame
while [ $# -gt 0 ]; do
	case $1 in
	--stop) STOP=1 ;;
	--keep) KEEP=1 ;;
	--capture-all) CAPTURE_ALL=1 ;;
	--wire)
		[[ $# -ge 2 && ($2 == frame || $2 == udp) ]] || usage
		WIRE=$2
		shift
		;;
	--cases)
		[ $# -ge 2 ] || usage
		ONLY=$2
		shift
		;;
	--list) LIST=1 ;;
	-h | --help) usage ;;
	*)
		echo "peer_check: unknown argument '$1'" >&2
		usage
		;;
	esac
	shift
done

# name|options|flags (loss: with packet loss; capture: tcpdump the run
# whose server is on the guest)
COMMON=(-w 8 --qp-timeout 18 -t 120 -r 32 --rx-stall 0)
CASES=(
	"mixed-1qp|-q 1 -n 300 -s 101|"
	"mixed-4qp|-q 4 -n 200 -s 102|"
	"mixed-8qp|-q 8 -n 150 -s 103|"
	"large-1M|-q 2 -n 20 -m 1M -w 4 -s 104|"
	"rnr|-q 2 -n 200 -r 1 --rx-stall 200 -s 105|"
	"loss|-q 4 -n 150 -s 106|loss,capture"
)
if [ "${LIST:-0}" = 1 ]; then
	echo "common: ${COMMON[*]}"
	printf '%s\n' "${CASES[@]}" | column -t -s'|'
	exit 0
fi

BUILD=${BUILD:-$REPO/build}
PEER_DIR=${PEER_DIR:-$REPO/../shared/peer}
export WORK=${WORK:-/tmp/rxepeer} # the peer scripts' work directory
DEV=${PEER_DEV:-perni0}
PORT=${PEER_PORT:-25100}
CASE_TIMEOUT=${CASE_TIMEOUT:-300}
LOSS_PCT=${LOSS_PCT:-1}
TAP=rxetap0
HOST_ADDR=198.51.100.1
GUEST_ADDR=198.51.100.2
HOST_GID=0  # ernic: GID 0 is the IPv4-mapped address
GUEST_GID=1 # rxe: GID 0 is the link-local one, 1 the IPv4-mapped one
RXE=rxe0
NFT_TABLE=ernic_peer_check
SHARE=$WORK/share
GUEST_BIN=/mnt/host/bin/ernic_check

say() { echo "peer_check: $*"; }
die() {
	echo "peer_check: error: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (the peer's tap and QEMU, ernicctl's device nodes, nft, tcpdump)"
case $LOSS_PCT in
[1-9] | [1-4][0-9] | 50) ;;
*) die "LOSS_PCT must be an integer in 1..50, not '$LOSS_PCT'" ;;
esac
for c in nft ss timeout tcpdump tshark python3 ldd; do
	command -v "$c" >/dev/null || die "'$c' is not installed (scripts/deps.sh, shared/peer/build-image.sh)"
done
CHECK=$BUILD/bin/ernic_check
ERNICCTL=$BUILD/bin/ernicctl
ICRC_CHECK=$BUILD/bin/icrc_check
for f in "$CHECK" "$ERNICCTL" "$ICRC_CHECK" "$BUILD/lib/libernic-rdmav34.so"; do
	[ -e "$f" ] || die "$f is missing: build first (scripts/build.sh, or BUILD=DIR)"
done
[ -x "$PEER_DIR/start-guest.sh" ] || die "no peer scripts in $PEER_DIR (set PEER_DIR)"
PEER_DIR=$(cd "$PEER_DIR" && pwd)

OUT=$(mktemp -d /tmp/peer_check.XXXXXX)
export ERNIC_RUNDIR=$OUT/rundir # our own overlay: other devices are left alone
export SYSFS_PATH=$ERNIC_RUNDIR/sysfs
export RDMAV_DRIVERS=$BUILD/lib/libernic
export WIRESHARK_CONFIG_DIR=$OUT/wireshark # tshark without user preferences

BG_PIDS=()
GUEST_PIDFILES=()
DEV_ADDED=0 NFT_ADDED=0 GUEST_TC=0 OLD_QLEN='' FAILED=0

bg_done() { # PID: waited for, no longer ours to kill
	local i
	for i in "${!BG_PIDS[@]}"; do
		[ "${BG_PIDS[i]}" != "$1" ] || unset 'BG_PIDS[i]'
	done
}
# shellcheck source=SCRIPTDIR/peer_lib.sh
source "$REPO/scripts/peer_lib.sh" # peer, in_guest, guest_running, peer_boot

cleanup() {
	local rc=$? p f
	set +e
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	if guest_running; then
		for f in "${GUEST_PIDFILES[@]}"; do
			[ -s "$SHARE/$f" ] || continue
			in_guest -t 20 "kill $(cat "$SHARE/$f") 2>/dev/null; true" >/dev/null
		done
		[ "$GUEST_TC" = 0 ] ||
			in_guest -t 20 'tc qdisc del dev eth0 clsact' >/dev/null
	fi
	rm -f "${GUEST_PIDFILES[@]/#/$SHARE/}"
	[ "$NFT_ADDED" = 0 ] || nft delete table netdev "$NFT_TABLE"
	[ "$DEV_ADDED" = 0 ] || "$ERNICCTL" del "$DEV" >/dev/null
	[ -z "$OLD_QLEN" ] || ip link set "$TAP" txqueuelen "$OLD_QLEN" 2>/dev/null
	if [ "$STOP" = 1 ]; then
		peer stop-guest.sh
	elif guest_running; then
		say "the guest keeps running (--stop, or $PEER_DIR/stop-guest.sh, powers it off)"
	fi
	if [ "$KEEP" = 1 ] || [ "$rc" != 0 ] || [ "$FAILED" != 0 ]; then
		say "logs and capture kept in $OUT"
	else
		rm -rf "$OUT"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the peer -----------------------------------------------------------
peer_boot "$HOST_ADDR" "$TAP"

mkdir -p "$SHARE/bin"
cp "$CHECK" "$SHARE/bin/ernic_check.tmp"
mv "$SHARE/bin/ernic_check.tmp" "$SHARE/bin/ernic_check"
if ! in_guest -t 60 "ldd $GUEST_BIN && $GUEST_BIN -h >/dev/null" >"$OUT/guest-ldd.txt" 2>&1 ||
	grep -q 'not found' "$OUT/guest-ldd.txt"; then
	cat "$OUT/guest-ldd.txt" >&2
	die "ernic_check does not run in the guest"
fi
say "ernic_check runs in the guest ($(grep -c '=>' "$OUT/guest-ldd.txt") shared libraries, all found)"
in_guest -t 60 "ibv_devinfo -v -d $RXE" >"$OUT/rxe-devinfo.txt" 2>&1 || true
say "$RXE: $(grep -E 'max_qp_rd_atom|active_mtu|max_msg_sz|max_sge:' "$OUT/rxe-devinfo.txt" |
	awk '{printf "%s %s  ", $1, $2}')"

# --- the host device ----------------------------------------------------
"$ERNICCTL" add "$DEV" --sw "$HOST_ADDR" --wire "$WIRE" 2>&1 | sed 's/^/  /'
DEV_ADDED=1
if command -v ibv_devinfo >/dev/null; then
	ibv_devinfo -v -d "$DEV" >"$OUT/ernic-devinfo.txt" 2>&1 || true
	say "$DEV: $(grep -E 'max_qp_rd_atom|active_mtu|max_msg_sz|max_sge:' "$OUT/ernic-devinfo.txt" |
		awk '{printf "%s %s  ", $1, $2}')"
fi
OLD_QLEN=$(cat "/sys/class/net/$TAP/tx_queue_len")
ip link set "$TAP" txqueuelen 10000

# --- loss -----------------------------------------------------------------
loss_on() {
	nft -f - <<-EOF
		table netdev $NFT_TABLE {
			counter seen { }
			counter dropped { }
			chain egress {
				type filter hook egress device "$TAP" priority 0; policy accept;
				meta protocol ip udp dport 4791 counter name seen
				meta protocol ip udp dport 4791 numgen random mod 100 < $LOSS_PCT counter name dropped drop
			}
		}
	EOF
	NFT_ADDED=1
	GUEST_TC=1
	# gact netrand VAL: the drop is taken with probability 1/VAL. (flower,
	# not u32: 6.1's u32 logs a FORTIFY "field-spanning write" warning.)
	in_guest -t 30 "tc qdisc replace dev eth0 clsact &&
		tc filter replace dev eth0 egress protocol ip prio 1 handle 1 flower \
		ip_proto udp dst_port 4791 \
		action gact ok random netrand drop $((100 / LOSS_PCT))" >/dev/null ||
		die "cannot set up the guest's tc drop filter"
}
loss_off() {
	nft delete table netdev "$NFT_TABLE"
	NFT_ADDED=0
	in_guest -t 30 'tc qdisc del dev eth0 clsact' >/dev/null
	GUEST_TC=0
}
nft_counter() { # NAME: packets
	nft list counter netdev "$NFT_TABLE" "$1" | awk '/packets/ { print $2 }'
}
guest_tc_counts() { # "matched dropped" of the guest's egress filter
	in_guest -t 30 'tc -s filter show dev eth0 egress' |
		sed -nE 's/.*Sent [0-9]+ bytes ([0-9]+) pkt \(dropped ([0-9]+).*/\1 \2/p' | head -n1
}
tap_drops() { cat "/sys/class/net/$TAP/statistics/tx_dropped"; }

# --- one run ----------------------------------------------------------------
# The client's PASS line without what differs between the sides.
# (The helpers below print nothing, successfully, when there is no match.)
# shellcheck disable=SC2016 # sed's $ is the last line
pass_counts() {
	sed -nE '/^ernic_check: PASS seed=/h; ${x; s/ (bytes_verified|rnr_waits|elapsed|invalid_rx|inline)=[^ ]*//g; p}' "$1"
}
# shellcheck disable=SC2016
field() { # FILE KEY: KEY=value of the last PASS/FAIL line
	sed -nE '/^ernic_check: (PASS|FAIL) seed=/h; ${x; s/.* '"$2"'=([^ ]*).*/\1/p}' "$1"
}
guest_listening() { # PORT
	in_guest -t 20 "ss -Hltn 'sport = :$1' | grep -q ." >/dev/null 2>&1
}
host_listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

ROWS=()
# run_case NAME SIDE(rxe|ernic: where the server runs) FLAGS ARGS...
run_case() {
	local name=$1 side=$2 flags=$3 n port srv cli src=0 crc=0 id i pcap=''
	local tp0 g0='' gd0='' g1='' gd1='' tapd lossd=- verdict why s c tcp='' gargs
	shift 3
	n=${#ROWS[@]}
	port=$((PORT + n))
	srv=$OUT/$name.$side.srv
	cli=$OUT/$name.$side.cli
	gargs=$(printf '%q ' "$@")
	if [ "$CAPTURE_ALL" = 1 ] || { [[ ",$flags," == *,capture,* ]] && [ "$side" = rxe ]; }; then
		pcap=$OUT/$name.$side.pcap
		nice -n -10 tcpdump -i "$TAP" -B 131072 -U --immediate-mode -w "$pcap" \
			'udp port 4791' 2>"${pcap%.pcap}.tcpdump" &
		tcp=$!
		BG_PIDS+=("$tcp")
		sleep 1
	fi
	tp0=$(tap_drops)
	if [[ ",$flags," == *,loss,* ]]; then
		nft reset counters table netdev "$NFT_TABLE" >/dev/null
		read -r g0 gd0 <<<"$(guest_tc_counts)"
	fi
	if [ "$side" = rxe ]; then
		GUEST_PIDFILES+=("out/peer_check.$port.pid")
		id=$(in_guest -b "echo \$\$ > /mnt/host/out/peer_check.$port.pid; exec timeout $CASE_TIMEOUT $GUEST_BIN -d $RXE -g $GUEST_GID -p $port")
		for ((i = 0; i < 60; i++)); do
			guest_listening "$port" && break
			sleep 0.5
		done
		timeout "$CASE_TIMEOUT" "$CHECK" -d "$DEV" -g "$HOST_GID" -p "$port" "$@" \
			"$GUEST_ADDR" >"$cli" 2>&1 || crc=$?
		in_guest -t $((CASE_TIMEOUT + 30)) -w "$id" >"$srv" 2>&1 || src=$?
		# ended (or still running after the timeout: cleanup kills it)
		[ "$src" = 124 ] || rm -f "$SHARE/out/peer_check.$port.pid"
	else
		timeout "$CASE_TIMEOUT" "$CHECK" -d "$DEV" -g "$HOST_GID" -p "$port" >"$srv" 2>&1 &
		s=$!
		BG_PIDS+=("$s")
		for ((i = 0; i < 300; i++)); do
			host_listening "$port" && break
			kill -0 "$s" 2>/dev/null || break
			sleep 0.1
		done
		in_guest -t $((CASE_TIMEOUT + 30)) "timeout $CASE_TIMEOUT $GUEST_BIN -d $RXE -g $GUEST_GID -p $port $gargs $HOST_ADDR" \
			>"$cli" 2>&1 || crc=$?
		wait "$s" || src=$?
		bg_done "$s"
	fi
	tapd=$(($(tap_drops) - tp0))
	if [[ ",$flags," == *,loss,* ]]; then
		read -r g1 gd1 <<<"$(guest_tc_counts)"
		lossd="$(nft_counter dropped)/$(nft_counter seen) $((gd1 - gd0))/$((g1 - g0))"
	fi
	if [ -n "$tcp" ]; then
		sleep 1
		kill "$tcp" 2>/dev/null
		wait "$tcp" 2>/dev/null || true
		bg_done "$tcp"
	fi
	s=$(pass_counts "$srv")
	c=$(pass_counts "$cli")
	if [ "$src" = 0 ] && [ "$crc" = 0 ] && [ -n "$c" ] && [ "$s" = "$c" ] &&
		[[ "$c" != *" ops=0 "* ]]; then
		verdict=PASS
	else
		verdict=FAIL
		FAILED=$((FAILED + 1))
		why=$(cat "$cli" "$srv" | sed -n '/^ernic_check: FAIL: /{p;q}')
		[ -n "$why" ] || why="server exit $src, client exit $crc, PASS lines '$s' / '$c'"
	fi
	ROWS+=("$name|$side|$verdict|$(field "$cli" ops)|$(field "$cli" elapsed)|$(field "$srv" rnr_waits)/$(field "$cli" rnr_waits)|$tapd|$lossd")
	printf '%-10s server on %-5s %s\n' "$name" "$side" "$verdict"
	if [ "$verdict" = PASS ]; then
		grep -h -E '^ernic_check: PASS' "$srv" | sed 's/^/    server: /'
		grep -h -E '^ernic_check: PASS' "$cli" | sed 's/^/    client: /'
	else
		echo "    $why"
		echo "    logs: $srv $cli"
	fi
	[ -z "$pcap" ] || check_capture "$pcap"
}

# check_capture PCAP: every ICRC (two independent checkers), tshark decodes.
check_capture() {
	local pcap=$1 ic py frames bad real
	say "capture $pcap: $(grep -hE 'captured|dropped by kernel' "${pcap%.pcap}.tcpdump" | tr '\n' ' ')"
	if ic=$("$ICRC_CHECK" --min 100 "$pcap" 2>&1); then :; else
		FAILED=$((FAILED + 1))
		echo "    icrc_check FAILED:"
	fi
	grep -E 'file\(s\)|agrees' <<<"$ic" | sed 's/^/    /'
	py=$(python3 "$PEER_DIR/roce-icrc.py" "$pcap" 2>&1 | tail -n1) || true
	echo "    roce-icrc.py: $py"
	[[ "$py" == *" 0 bad"* ]] || FAILED=$((FAILED + 1))
	frames=$(tshark -r "$pcap" --disable-protocol rpcordma -Y infiniband 2>/dev/null | wc -l)
	bad=$(tshark -r "$pcap" --disable-protocol rpcordma -Y _ws.malformed 2>/dev/null | wc -l)
	# Wireshark's InfiniBand dissector hands a payload that starts with a
	# known Ethertype and two zero bytes to that Ethertype's dissector;
	# tiny payloads (1-3 bytes plus pad) then decode as a truncated VLAN,
	# LOOP, IP... header. That is the payload's content, not the headers.
	real=$(tshark -r "$pcap" --disable-protocol rpcordma \
		-Y '_ws.malformed && !(frame.protocols contains "infiniband:ethertype")' 2>/dev/null | wc -l)
	echo "    tshark: $frames InfiniBand frames, $bad malformed ($((bad - real)) of them tiny payloads taken for an Ethertype header), $real other"
	[ "$real" = 0 ] || FAILED=$((FAILED + 1))
}

# --- the cases ------------------------------------------------------------
say "ernic_check cases between $DEV ($HOST_ADDR, GID $HOST_GID) and $RXE ($GUEST_ADDR, GID $GUEST_GID); common options: ${COMMON[*]}"
ran=0
for entry in "${CASES[@]}"; do
	IFS='|' read -r name opts flags <<<"$entry"
	[ -z "$ONLY" ] || [[ ",$ONLY," == *",$name,"* ]] || continue
	read -ra args <<<"$opts"
	[[ ",$flags," != *,loss,* ]] || loss_on
	for side in rxe ernic; do
		run_case "$name" "$side" "$flags" "${COMMON[@]}" "${args[@]}"
	done
	[[ ",$flags," != *,loss,* ]] || loss_off
	ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || die "no case matches '$ONLY' (--list shows them)"

echo
{
	echo "case|server|result|ops|elapsed|rnr_waits srv/cli|tapdrop|lost h>g g>h"
	printf '%s\n' "${ROWS[@]}"
} | column -t -s'|'
echo
if [ "$FAILED" = 0 ]; then
	say "all ${#ROWS[@]} runs passed"
else
	say "$FAILED failure(s)"
	exit 1
fi
