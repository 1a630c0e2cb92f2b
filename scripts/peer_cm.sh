#!/bin/bash
# SPDX-License-Identifier: MIT
# By hand, as root: unmodified rdma_cm programs between a host software
# ERNIC (our librdmacm and IB CM on QP1) and the Linux kernel's rdma_cm
# over rxe in the QEMU guest of shared/peer, both ways: each case runs
# once with the server in the guest and once with it on the host.
#
#   scripts/peer_cm.sh [--stop] [--keep] [--wire frame|udp] [--cases NAME,...] [--list]
#
# Cases:
#   rping          rping -V -C 50 -S 1024 (both sides validate every ping)
#   rping-big      rping -V -C 10 -S 60000
#   rping-ownqp    rping -q: each program's own QP, taken through its
#                  states with rdma_init_qp_attr(), rdma_establish()
#   ucmatose       4 connections, 50 SENDs of 1000 bytes each way
#   rdma-server    rdma_server / rdma_client (synchronous ids, create_ep)
#   write-bw       ib_write_bw -R, 500 x 64 KiB
#   read-bw        ib_read_bw -R, 300 x 64 KiB
#   send-lat       ib_send_lat -R, 200 x 2 B
#   reject         a REQ for a port nobody listens on: REJ reason 8
#   cm-loss        CM_LOSS_PCT % (default 30) of QP1 packets dropped each
#                  way; 3 rping connections must all come up and close
#                  (retransmission, MRA, duplicate REQ/REP/DREQ handling)
#   capture        one rping captured on the tap: tshark decodes the CM
#                  MADs (REQ, REP, RTU, DREQ, DREP in that order, from
#                  the right sides) and every ICRC is right (icrc_check)
#
# The host device is made in frame mode (--wire udp: on a UDP socket) on
# the guest's tap in a run directory of its own. Under TCG the guest is
# slow: speeds measure the emulator. Exit status: 0 when every run passed, 1 otherwise, 2 usage.
# Environment: BUILD (default build/), PEER_DIR (../shared/peer), WORK
# (/tmp/rxepeer), CASE_TIMEOUT (s, 120), CM_LOSS_PCT (1..90). The
# cm-loss case prints our CM's counters (ERNIC_CM_STATS) summed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

ALL=(rping rping-big rping-ownqp ucmatose rdma-server write-bw read-bw
	send-lat reject cm-loss capture)
usage() {
	sed -n '/^#   scripts/p' "$0" | sed 's/^#   /usage: /' >&2
	exit 2
}
STOP=0 KEEP=0 ONLY='' WIRE=frame
while [ $# -gt 0 ]; do
	case $1 in
	--stop) STOP=1 ;;
	--keep) KEEP=1 ;;
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
	--list)
		printf '%s\n' "${ALL[@]}"
		exit 0
		;;
	*) usage ;;
	esac
	shift
done

BUILD=${BUILD:-$REPO/build}
PEER_DIR=${PEER_DIR:-$REPO/../shared/peer}
export WORK=${WORK:-/tmp/rxepeer}
CASE_TIMEOUT=${CASE_TIMEOUT:-120}
CM_LOSS_PCT=${CM_LOSS_PCT:-30}
TAP=rxetap0 HOST=198.51.100.1 GUEST=198.51.100.2 DEV=pernicm0
NFT_TABLE=ernic_peer_cm
ERNICCTL=$BUILD/bin/ernicctl
ICRC_CHECK=$BUILD/bin/icrc_check

say() { echo "peer_cm: $*"; }
die() {
	echo "peer_cm: error: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "run as root (QEMU and its tap, ernicctl's device nodes, nft)"
for f in "$ERNICCTL" "$ICRC_CHECK" "$BUILD/lib/rdmacm/librdmacm.so.1"; do
	[ -e "$f" ] || die "$f is missing: build first (scripts/test.sh or BUILD=DIR)"
done
for c in rping ucmatose rdma_server ib_write_bw nft tcpdump tshark ss; do
	command -v "$c" >/dev/null || die "'$c' is missing (scripts/deps.sh)"
done
PEER_DIR=$(cd "$PEER_DIR" && pwd)
case $CM_LOSS_PCT in
[1-9] | [1-8][0-9] | 90) ;;
*) die "CM_LOSS_PCT must be 1..90" ;;
esac

OUT=$(mktemp -d /tmp/peer_cm.XXXXXX)
export ERNIC_RUNDIR=$OUT/rundir
export WIRESHARK_CONFIG_DIR=$OUT/wireshark
mkdir -p "$ERNIC_RUNDIR"
DEV_ADDED=0 NFT_ADDED=0 GUEST_TC=0 FAILED=0
BG=()

# shellcheck source=SCRIPTDIR/peer_lib.sh
source "$REPO/scripts/peer_lib.sh" # peer, in_guest, guest_running, peer_boot
cleanup() {
	local rc=$? p
	set +e
	for p in "${BG[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if guest_running; then
		in_guest -t 20 'pkill -x rping; pkill -x ucmatose; pkill -x rdma_server
			pkill -f "ib_(write|read|send)_(bw|lat)"; true' >/dev/null
		[ "$GUEST_TC" = 0 ] || in_guest -t 20 'tc qdisc del dev eth0 clsact' >/dev/null
	fi
	[ "$NFT_ADDED" = 0 ] || nft delete table netdev "$NFT_TABLE"
	[ "$DEV_ADDED" = 0 ] || "$ERNICCTL" del "$DEV" >/dev/null
	[ "$STOP" = 0 ] || peer stop-guest.sh
	if [ "$KEEP" = 1 ] || [ "$rc" != 0 ] || [ "$FAILED" != 0 ]; then
		say "logs kept in $OUT"
	else
		rm -rf "$OUT"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the peer and our device ----------------------------------------------
peer_boot "$HOST" "$TAP"
"$ERNICCTL" add "$DEV" --sw "$HOST" --wire "$WIRE" >/dev/null
DEV_ADDED=1
eval "$("$ERNICCTL" env)"

# --- one run ------------------------------------------------------------
# srv_host CMD...: our server in the background; ready once it holds its
# device (frame mode: a packet socket) and has listened just after.
srv_host() { # OUTFILE CMD...
	local out=$1 pid i
	shift
	timeout "$CASE_TIMEOUT" "$@" >"$out" 2>&1 &
	pid=$!
	BG+=("$pid")
	for ((i = 0; i < 100; i++)); do
		# listening: the device's state file lists its port (rdma_listen)
		"$ERNICCTL" show "$DEV" 2>/dev/null | grep -q '^listens [1-9]' && break
		sleep 0.1
	done
	SRV_PID=$pid
}
srv_wait() { # -> its exit status
	local rc=0
	wait "$SRV_PID" || rc=$?
	return "$rc"
}

ROWS=()
row() { # NAME WAY VERDICT DETAIL
	ROWS+=("$1|$2|$3|$4")
	[ "$3" = PASS ] || FAILED=1
	echo "$3: $1 ($2) $4"
}

# pair NAME PROG SRV_ARGS CLI_ARGS CHECK: PROG's server and client both
# ways (PROG may be SERVER_PROG:CLIENT_PROG).
# @S@ is the server's address, @C@ the client's, @P@ the port. Sets
# OUT_SRV / OUT_CLI for the caller's checks through CHECK (a function:
# CHECK SRVFILE CLIFILE -> 0 or prints why).
PORT=7600
pair() {
	local name=$1 sprog=${2%%:*} cprog=${2#*:} srv_args=$3 cli_args=$4 check=$5
	local way s c job src crc why
	for way in rxe-server ernic-server; do
		PORT=$((PORT + 1))
		s=$OUT/$name.$way.srv c=$OUT/$name.$way.cli
		if [ $way = rxe-server ]; then
			local sa=${srv_args//@S@/$GUEST} ca=${cli_args//@S@/$GUEST}
			sa=${sa//@C@/$HOST} ca=${ca//@C@/$HOST}
			job=$(in_guest -b "timeout $CASE_TIMEOUT $sprog ${sa//@P@/$PORT}")
			sleep 3
			crc=0
			# shellcheck disable=SC2086 # option words
			timeout "$CASE_TIMEOUT" $cprog ${ca//@P@/$PORT} >"$c" 2>&1 || crc=$?
			src=0
			in_guest -t $((CASE_TIMEOUT + 30)) -w "$job" >"$s" 2>&1 || src=$?
		else
			local sa=${srv_args//@S@/$HOST} ca=${cli_args//@S@/$HOST}
			sa=${sa//@C@/$GUEST} ca=${ca//@C@/$GUEST}
			# shellcheck disable=SC2086
			srv_host "$s" $sprog ${sa//@P@/$PORT}
			crc=0
			in_guest -t $((CASE_TIMEOUT + 30)) \
				"timeout $CASE_TIMEOUT $cprog ${ca//@P@/$PORT}" >"$c" 2>&1 || crc=$?
			src=0
			srv_wait || src=$?
		fi
		if why=$("$check" "$s" "$c" "${crc:-?}" "${src:-?}"); then
			row "$name" "$way" PASS "$why"
		else
			row "$name" "$way" FAIL "$why (logs: $s $c)"
		fi
	done
}

# Checks: SRVFILE CLIFILE CLIENT_RC SERVER_RC
rcs_ok() { [ "$3" = 0 ] && [ "$4" = 0 ]; }
check_rping() {
	local n m want=$RPING_COUNT
	n=$(grep -c '^ping data: rdma-ping-' "$2" || true)
	m=$(grep -c '^server ping data: rdma-ping-' "$1" || true)
	if rcs_ok "$@" && [ "$n" = "$want" ] && [ "$m" = "$want" ] &&
		! grep -qi 'mismatch\|fail' "$1" "$2"; then
		echo "$n pings validated by both sides"
	else
		echo "client rc $3 ($n pings), server rc $4 ($m pings)"
		return 1
	fi
}
check_ucma() {
	if rcs_ok "$@" && grep -q 'test complete' "$2" &&
		grep -q 'return status 0' "$1" && grep -q 'return status 0' "$2"; then
		echo "4 connections, data both ways, disconnected"
	else
		echo "client rc $3, server rc $4"
		return 1
	fi
}
check_rdma_server() {
	if rcs_ok "$@" && grep -q 'end 0' "$1" && grep -q 'end 0' "$2"; then
		echo "end 0 on both sides"
	else
		echo "client rc $3, server rc $4"
		return 1
	fi
}
check_perftest() {
	local line
	line=$(grep -E '^ +[0-9]+ +[0-9]+ +[0-9.]+' "$2" | tail -1 | tr -s ' ')
	if rcs_ok "$@" && [ -n "$line" ]; then
		echo "${line# }"
	else
		echo "client rc $3, server rc $4"
		return 1
	fi
}

run() {
	case $1 in
	rping)
		RPING_COUNT=50
		pair rping rping "-s -a @S@ -p @P@ -C 50 -S 1024 -V -v" \
			"-c -a @S@ -I @C@ -p @P@ -C 50 -S 1024 -V -v" check_rping
		;;
	rping-big)
		RPING_COUNT=10
		pair rping-big rping "-s -a @S@ -p @P@ -C 10 -S 60000 -V -v" \
			"-c -a @S@ -I @C@ -p @P@ -C 10 -S 60000 -V -v" check_rping
		;;
	rping-ownqp)
		RPING_COUNT=20
		pair rping-ownqp rping "-s -a @S@ -p @P@ -C 20 -S 1024 -V -v -q" \
			"-c -a @S@ -I @C@ -p @P@ -C 20 -S 1024 -V -v -q" check_rping
		;;
	ucmatose)
		pair ucmatose ucmatose "-b @S@ -p @P@ -c 4 -C 50 -S 1000" \
			"-s @S@ -b @C@ -p @P@ -c 4 -C 50 -S 1000" check_ucma
		;;
	rdma-server)
		pair rdma-server rdma_server:rdma_client "-s @S@ -p @P@" "-s @S@ -p @P@" \
			check_rdma_server
		;;
	write-bw | read-bw | send-lat)
		local prog=ib_write_bw n=500 s=65536
		[ "$1" != read-bw ] || prog=ib_read_bw n=300
		[ "$1" != send-lat ] || prog=ib_send_lat n=200 s=2
		pair "$1" "$prog" "-R --source_ip @S@ -p @P@ -n $n -s $s" \
			"-R --source_ip @C@ -p @P@ -n $n -s $s @S@" check_perftest
		;;
	reject) run_reject ;;
	cm-loss) run_loss ;;
	capture) run_capture ;;
	*) die "unknown case '$1' (--list)" ;;
	esac
}

# A REQ to a port nobody listens on (the other side's device up, serving
# a listener on another port): the client must be told REJECTED, 8.
run_reject() {
	local job out
	PORT=$((PORT + 2))
	job=$(in_guest -b "timeout 40 rping -s -a $GUEST -p $PORT -C 1")
	sleep 3
	out=$(timeout 40 rping -c -d -a "$GUEST" -I "$HOST" -p $((PORT + 1)) -C 1 2>&1) || true
	if grep -q 'RDMA_CM_EVENT_REJECTED, error 8' <<<"$out"; then
		row reject rxe-server PASS "kernel CM answered REJ 8 (invalid service ID)"
	else
		row reject rxe-server FAIL "$(tail -2 <<<"$out" | tr '\n' ' ')"
	fi
	in_guest -t 20 "pkill -x rping; true" >/dev/null
	in_guest -t 60 -w "$job" >/dev/null 2>&1 || true
	srv_host "$OUT/reject.srv" rping -s -a "$HOST" -p "$PORT" -C 1
	out=$(in_guest -t 60 "timeout 40 rping -c -d -a $HOST -I $GUEST -p $((PORT + 1)) -C 1" 2>&1) || true
	if grep -q 'RDMA_CM_EVENT_REJECTED, error 8' <<<"$out"; then
		row reject ernic-server PASS "our CM answered REJ 8 (invalid service ID)"
	else
		row reject ernic-server FAIL "$(tail -2 <<<"$out" | tr '\n' ' ')"
	fi
	kill "$SRV_PID" 2>/dev/null || true
	srv_wait || true
}

# Drop CM_LOSS_PCT % of the QP1 packets each way: host->guest with
# nftables on the tap's egress (frame mode bypasses the IP hooks), guest
# ->host with tc in the guest (u32 on the BTH's destination QP: offset 32
# of the IP packet, UDP payload byte 4). Data packets pass.
run_loss() {
	local i drop_h drop_g
	nft -f - <<-EOF
		table netdev $NFT_TABLE {
			counter qp1 { }
			counter dropped { }
			chain egress {
				type filter hook egress device "$TAP" priority 0; policy accept;
				meta protocol ip udp dport 4791 @th,104,24 1 counter name qp1
				meta protocol ip udp dport 4791 @th,104,24 1 numgen random mod 100 < $CM_LOSS_PCT counter name dropped drop
			}
		}
	EOF
	NFT_ADDED=1
	in_guest -t 30 "tc qdisc replace dev eth0 clsact &&
		tc filter replace dev eth0 egress protocol ip prio 1 handle 800::1 u32 \
		match ip dport 4791 0xffff match u32 0x00000001 0x00ffffff at 32 \
		action gact ok random netrand drop $((100 / CM_LOSS_PCT))" >/dev/null ||
		die "cannot set up the guest's tc filter"
	GUEST_TC=1
	export ERNIC_CM_STATS=1	# our side's CM counters, on each program's stderr
	RPING_COUNT=5
	for i in 1 2 3; do
		pair "cm-loss-$i" rping "-s -a @S@ -p @P@ -C 5 -S 256 -V -v" \
			"-c -a @S@ -I @C@ -p @P@ -C 5 -S 256 -V -v" check_rping
	done
	drop_h=$(nft list counter netdev "$NFT_TABLE" dropped | awk '/packets/ { print $2 }')
	drop_g=$(in_guest -t 30 'tc -s filter show dev eth0 egress' |
		sed -nE 's/.*Sent [0-9]+ bytes ([0-9]+) pkt \(dropped ([0-9]+).*/\2 of \1/p' | head -1)
	unset ERNIC_CM_STATS
	say "cm-loss: QP1 packets dropped: host->guest $drop_h of $(nft list counter netdev "$NFT_TABLE" qp1 | awk '/packets/ { print $2 }'), guest->host $drop_g"
	say "cm-loss: our CM, summed over the runs: $(cat "$OUT"/cm-loss-*.ernic-server.srv "$OUT"/cm-loss-*.rxe-server.cli |
		sed -nE 's/^librdmacm \(ernic\): [^ ]+ CM: //p' |
		awk '{ for (i = 1; i < NF; i += 2) t[$i] += $(i + 1) } END { for (k in t) printf "%s %d ", k, t[k] }')"
	nft delete table netdev "$NFT_TABLE"
	NFT_ADDED=0
	in_guest -t 30 'tc qdisc del dev eth0 clsact' >/dev/null
	GUEST_TC=0
}

# One rping with our client, captured on the tap.
run_capture() {
	local pcap=$OUT/capture.pcap tpid job seq bad
	nice -n -10 tcpdump -i "$TAP" -U --immediate-mode -B 131072 -w "$pcap" \
		udp port 4791 >"$OUT/tcpdump.log" 2>&1 &
	tpid=$!
	BG+=("$tpid")
	sleep 1
	PORT=$((PORT + 1))
	job=$(in_guest -b "timeout 60 rping -s -a $GUEST -p $PORT -C 5 -S 512 -V")
	sleep 3
	timeout 60 rping -c -a "$GUEST" -I "$HOST" -p "$PORT" -C 5 -S 512 -V >"$OUT/capture.cli" 2>&1 || true
	in_guest -t 90 -w "$job" >/dev/null 2>&1 || true
	sleep 2
	kill "$tpid"
	wait "$tpid" 2>/dev/null || true
	seq=$(tshark -r "$pcap" -d udp.port==4791,infiniband --disable-protocol rpcordma \
		-Y 'infiniband.bth.destqp == 1' -T fields -e ip.src -e infiniband.mad.attributeid \
		2>/dev/null | awk -v h="$HOST" '{ printf "%s:%s ", ($1 == h ? "ernic" : "rxe"), $2 }')
	bad=$("$ICRC_CHECK" "$pcap" 2>&1 | grep -o 'ICRC good [0-9]*, bad [0-9]*, malformed [0-9]*')
	# REQ 0x0010, REP 0x0013, RTU 0x0014, DREQ 0x0015, DREP 0x0016
	if [[ "$seq" =~ ernic:0x0010\ (rxe:0x0011\ )?rxe:0x0013\ ernic:0x0014\ .*0x0015\ .*0x0016 ]] &&
		[[ "$bad" == *", bad 0, malformed 0" ]]; then
		row capture rxe-server PASS "CM: $seq| ICRC: $bad"
	else
		row capture rxe-server FAIL "CM: $seq| ICRC: $bad (pcap $pcap)"
	fi
}

IFS=, read -r -a SEL <<<"${ONLY:-$(IFS=,; echo "${ALL[*]}")}"
for c in "${SEL[@]}"; do
	run "$c"
done
echo
printf '%s\n' "${ROWS[@]}" | column -t -s'|'
[ "$FAILED" = 0 ] || exit 1
