#!/bin/bash
# SPDX-License-Identifier: MIT
# The way a ping-pong's packets take (docs/datapath.md, "ACKs ride with
# the reply", "READs find the thread awake"): unmodified ib_write_lat,
# ib_send_lat and ib_read_lat between the fixture's software ERNICs, on
# both wires, each program's engine counting what it did
# (ERNIC_ENGINE_STATS). Every engine thread must have slept through most
# messages: the polls took the packets, or (READ's responder) the thread
# stayed awake between READs; in WRITE and SEND ping-pongs, each side
# must have held most ACKs for its application's reply. With the ACK
# sent first, ib_write_lat's reply came after the peer's poll had ended
# and woke the peer's engine thread, about once per message; each READ
# woke the responder's thread, each response the requester's.
# Not a timing: counts of what the engines did, with a wide margin.
# Then, in a capture, a SEND ping-pong's ACKs ahead of the replies
# (order_case).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ib_write_lat ib_send_lat ib_read_lat ss dumpcap tshark
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"
ITERS=${LATENCY_PATH_ITERS:-4000}
export ERNIC_ENGINE_STATS=1

# stat FILE DEVICE FIELD: a number from DEVICE's ERNIC_ENGINE_STATS line
stat() {
	sed -nE "s/^ernic engine $2: .*$3 ([0-9]+).*/\1/p" "$1" | head -n1
}

# The most context switches an engine thread may have in ITERS round
# trips, by role. Without what is checked, each message costs one or
# more (a READ's responder: one per READ; ib_read_lat's requester: 0.3
# per READ, from packets its polls took). The margins allow for a busy
# host: the responder's thread sleeps when a READ is over 20 us late.
max_switches() { # PROG SIDE(server|client)
	case $1:$2 in
	ib_read_lat:server) echo $((ITERS * 3 / 4)) ;;
	ib_read_lat:client) echo $((ITERS / 4)) ;;
	*) echo $((ITERS / 2)) ;;
	esac
}

# path_try LABEL SRV CLI PROG: one run; what its counts break goes to
# PATH_WHY (empty: none). A failed program is a failed case at once.
path_try() {
	local f dev side held sw max n=${#FAILURES[@]}
	PATH_WHY=
	perftest_case "$1" "$2" "$3" "$4" "$ITERS" -s 2
	[ ${#FAILURES[@]} = "$n" ] || return 0
	for f in "server:$PAIR_SERVER_OUT:${HOST_DEV[$2]}" "client:$PAIR_CLIENT_OUT:${HOST_DEV[$3]}"; do
		side=${f%%:*} f=${f#*:}
		dev=${f##*:} f=${f%:*}
		held=$(stat "$f" "$dev" "ACKs held for a reply")
		sw=$(stat "$f" "$dev" "thread switched out")
		max=$(max_switches "$4" "$side")
		grep -E "^ernic engine $dev:" "$f" | sed 's/^/    /'
		if [ -z "$held" ] || [ -z "$sw" ]; then
			PATH_WHY+="$dev: no ERNIC_ENGINE_STATS line; "
		elif [ "$4" != ib_read_lat ] && ((held < ITERS * 3 / 4)); then
			PATH_WHY+="$dev held $held ACKs for a reply in $ITERS round trips (want >= $((ITERS * 3 / 4))); "
		elif ((sw > max)); then
			PATH_WHY+="$dev ($side)'s engine thread was switched out $sw times in $ITERS round trips (want <= $max); "
		fi
	done
}

# path_case LABEL SRV CLI PROG: path_try, and once more if its counts
# failed: they count what a busy host also moves (another program on
# the two CPUs made ib_read_lat's round trips 30 us, longer than the
# responder's spin), so a case fails when two runs in a row break them.
path_case() {
	local n=${#FAILURES[@]}
	path_try "$@"
	[ ${#FAILURES[@]} = "$n" ] && [ -n "$PATH_WHY" ] || return 0
	echo "    $1 $4: ${PATH_WHY%; }; once more"
	path_try "$@"
	[ ${#FAILURES[@]} = "$n" ] && [ -n "$PATH_WHY" ] || return 0
	case_failed "$1 $4" "${PATH_WHY%; } (two runs)"
}

# order_case LABEL SRV CLI: ib_send_lat under dumpcap. Each SEND of the
# server answers the client's SEND of the same number, each SEND of the
# client after its first the server's SEND before it; the ACK held for
# the request a SEND answers (eng_acks_late) must leave before it: at
# a side's k-th SEND it must have sent k ACKs (server) or k - 1
# (client). Counted in each side's own packets, which the capture
# shows in their order (two sides' packets it may not). ib_send_lat -e
# waits for both completions on one channel and takes the first event
# as its send's; the reply's receive event first put it out of step (a
# send queue full, or a poll of an empty CQ read as an error), about
# once per thousand round trips. On the frame wire: the udp wire sends
# an ACK and a 2-byte SEND (both 20-byte payloads) as one GSO train,
# which tshark decodes as its first packet.
order_case() {
	local label="$1 ACK before the reply" pcap=$WORK/$1-order.pcap out
	local n=${#FAILURES[@]} sends acks late
	capture_start "$2" lo "$pcap" "$2" "$3"
	perftest_case "$1" "$2" "$3" ib_send_lat "$ORDER_ITERS" -s 2
	capture_stop
	[ ${#FAILURES[@]} = "$n" ] || return 0
	out=$(tshark -r "$pcap" -d 'udp.port==4791,infiniband' -Y infiniband.bth \
		-T fields -e ip.src -e infiniband.bth.opcode 2>/dev/null |
		awk -v cli="${HOST_IP[$3]}" '
		$2 == 4 { sends++; if (ack[$1] < ++snd[$1] - ($1 == cli)) late++ }
		$2 == 17 { acks++; ack[$1]++ }
		END { printf "%d %d %d\n", sends, acks, late }')
	read -r sends acks late <<<"$out"
	echo "    $label: $sends SENDs, $acks ACKs, $late SENDs ahead of an owed ACK"
	if ((sends < 2 * ORDER_ITERS)); then
		case_failed "$label" "captured $sends SENDs of $((2 * ORDER_ITERS))"
	elif ((late)); then
		case_failed "$label" "$late SENDs left before the ACK of the request they answer"
	fi
}

define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
define_host frame0 ernicf2 127.0.0.44
define_host frame1 ernicf3 127.0.0.45
add_device frame0 127.0.0.44 --wire frame
add_device frame1 127.0.0.45 --wire frame
for p in ib_write_lat ib_send_lat ib_read_lat; do
	path_case lo-udp udp0 udp1 "$p"
	path_case lo-frame frame0 frame1 "$p"
done
ORDER_ITERS=${LATENCY_ORDER_ITERS:-500}
order_case lo-frame frame0 frame1
finish
