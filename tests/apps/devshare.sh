#!/bin/bash
# SPDX-License-Identifier: MIT
# Device-wide allocation through the device's state file
# (docs/multiprocess.md), as `ernicctl show` reports it, on the
# fixture's software devices (ernict0/1) and virtual FPGAs (ernicu0/1):
#   - nobody using a device: no process, QP or MR;
#   - during an unmodified ib_write_bw pair: one process per device, with
#     its QP and MR;
#   - the server SIGKILLed mid-transfer: its process, QP and MR are gone
#     at once ("reaped": on a virtual FPGA by the device's broker), the
#     client fails as with a dead host and is gone too, and the devices
#     serve the next pair from QP 2 again;
#   - a user who cannot write the overlay uses each device alone.
#   environment: ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH, RDMAV_DRIVERS
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ib_write_bw ibv_rc_pingpong ss pgrep setpriv
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

# field DEV WORD: N of the line "WORD N" of `ernicctl show DEV`
field() {
	"$ERNICCTL" show "$1" | awk -v w="$2" '$1 == w { print $2 }'
}

# idle TEXT: `ernicctl show` says nobody holds anything
idle() {
	grep -qx 'processes 0' <<<"$1" && grep -qx 'qps 0' <<<"$1" &&
		grep -qx 'mrs 0' <<<"$1"
}

indent() {
	sed 's/^/    /'
}

expect_idle() { # LABEL DEV
	local out
	out=$("$ERNICCTL" show "$2") || fail "$1: ernicctl show $2 failed"
	if ! idle "$out"; then
		case_failed "$1" "$2 is not idle: $(tr '\n' ';' <<<"$out")"
	fi
}

# kill_case LABEL DEV_A IP_A DEV_B
kill_case() {
	local label=$1 a=$2 ip=$3 b=$4 spid cpid srv i out crc=0 before killed next
	expect_idle "$label: before" "$a"
	expect_idle "$label: before" "$b"
	pick_port server
	timeout 90 ib_write_bw -d "$a" -x 0 -D 30 -p "$PORT" \
		>"$WORK/$label.srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	wait_listening server "$PORT" "$spid" || true
	timeout 90 ib_write_bw -d "$b" -x 0 -D 30 -p "$PORT" "$ip" \
		>"$WORK/$label.cli" 2>&1 &
	cpid=$!
	BG_PIDS+=("$cpid")
	for ((i = 0; i < 100; i++)); do
		[ "$(field "$a" qps)" = 1 ] && [ "$(field "$b" qps)" = 1 ] &&
			break
		sleep 0.1
	done
	out=$("$ERNICCTL" show "$a")
	echo "$label: during the transfer, ernicctl show $a:"
	indent <<<"$out"
	if ! grep -qE '^process [0-9]+ pid [0-9]+ qps [0-9]+ mrs 1$' <<<"$out" ||
		! grep -qx 'processes 1' <<<"$out" ||
		[ "$(field "$b" processes)" != 1 ]; then
		show_output server "$WORK/$label.srv"
		show_output client "$WORK/$label.cli"
		case_failed "$label" "ib_write_bw's process, QP and MR not in the state"
		return
	fi
	sleep 1	# mid-transfer
	before=$(field "$a" reaped)
	srv=$(pgrep -P "$spid" ib_write_bw) ||
		{ case_failed "$label" "no ib_write_bw under $spid"; return; }
	kill -9 "$srv"
	wait "$spid" 2>/dev/null || true
	# A software device's process is reaped by whoever looks next
	# (here `ernicctl show`: "now 1"); a UIO device's by its broker,
	# which sees the process's connection end and cleans the IP first.
	for ((i = 0; i < 30; i++)); do
		out=$("$ERNICCTL" show "$a")
		idle "$out" && break
		sleep 0.1
	done
	echo "$label: after kill -9 of the server, ernicctl show $a:"
	indent <<<"$out"
	if ! idle "$out" || [ "$(awk '$1 == "reaped" { print $2 }' <<<"$out")" != $((before + 1)) ]; then
		case_failed "$label" "the killed server's process, QP or MR stayed"
	fi
	# The client finds its peer dead (retry exceeded) and ends.
	wait "$cpid" || crc=$?
	if [ "$crc" = 0 ] || [ "$crc" = 124 ]; then
		show_output client "$WORK/$label.cli"
		case_failed "$label" "client: $(describe_rc "$crc"), want a failure"
	fi
	expect_idle "$label: after the client" "$b"
	# The devices serve the next pair. QP numbers go round (a freed one
	# is the last given again): not the killed server's.
	killed=$(awk '/remote address/ { print $6; exit }' "$WORK/$label.cli")
	define_host pa "$a" "$ip"
	define_host pb "$b" "127.0.0.1"
	run_pair "$label next" pa pb -- ibv_rc_pingpong -d "$a" -g 0 -p @PORT@ \
		-- ibv_rc_pingpong -d "$b" -g 0 -p @PORT@ @SERVER@ ||
		case_failed "$label" "ibv_rc_pingpong after the kill failed"
	next=$(awk '/local address/ { sub(/,/, "", $6); print $6; exit }' "$PAIR_SERVER_OUT")
	if [[ ! "$killed" =~ ^0x[0-9a-f]+$ ]] || [[ ! "$next" =~ ^0x[0-9a-f]+$ ]] ||
		[ $((next)) = $((killed)) ]; then
		case_failed "$label" "the next QP ($next) is the killed server's ($killed) again"
	fi
	expect_idle "$label: at the end" "$a"
	echo "ok: $label"
}

# A user who may use the devices but not write the overlay (root's):
# each process uses its device alone, as before devices were shared, and
# says why at VERBS_LOG_LEVEL 4.
nobody_case() {
	local nb=(setpriv --reuid=65534 --regid=65534 --clear-groups) spid rc=0
	pick_port server
	"${nb[@]}" env VERBS_LOG_LEVEL=4 timeout 60 ibv_rc_pingpong -d ernict0 \
		-g 0 -p "$PORT" >"$WORK/nobody.srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	wait_listening server "$PORT" "$spid" || true
	"${nb[@]}" timeout 60 ibv_rc_pingpong -d ernict1 -g 0 -p "$PORT" \
		127.0.0.2 >"$WORK/nobody.cli" 2>&1 || rc=$?
	wait "$spid" || rc=$((rc ? rc : $?))
	if [ "$rc" != 0 ] || ! grep -q 'using the device alone' "$WORK/nobody.srv"; then
		show_output "server (nobody)" "$WORK/nobody.srv"
		show_output "client (nobody)" "$WORK/nobody.cli"
		case_failed "nobody" "ibv_rc_pingpong as an unprivileged user: $(describe_rc "$rc")"
		return
	fi
	echo "ok: as nobody, alone: $(grep 'using the device alone' "$WORK/nobody.srv")"
	echo "    $(grep 'bytes in' "$WORK/nobody.cli")"
}

define_host server ernict0 127.0.0.2
kill_case sw ernict0 127.0.0.2 ernict1
kill_case vfpga ernicu0 127.0.0.52 ernicu1
nobody_case
finish
