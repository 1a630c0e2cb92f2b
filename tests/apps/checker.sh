#!/bin/bash
# SPDX-License-Identifier: MIT
# ernic_check, the byte-exact RC traffic checker (tests/checker/),
# between the fixture's devices: the software ERNICs ernict0 (127.0.0.2)
# and ernict1 (127.0.0.3) with a few seeds, QP counts, sizes and op sets;
# the virtual-FPGA (UIO path) devices ernicu0/ernicu1 (127.0.0.52/.53);
# and the non-coherent ones ernicn0/ernicn1 (127.0.0.62/.63). Both sides
# must print PASS with the same op counts. Then the checks of the
# checker: a corrupted byte must make both sides FAIL, and a peer killed
# mid-run must leave an --expect-error survivor passing.
#
# Usage: checker.sh ERNIC_CHECK. Needs the fixture's devices (tests/
# devices.sh setup) and ctest's environment. To run it on other devices
# by hand: CHECKER_SW, CHECKER_UIO, CHECKER_NC = "DEV0 ADDR0 DEV1 ADDR1"
# (an empty value skips that group); CHECKER_PORT_BASE moves the ports.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ss timeout stdbuf
CHECK=${1:?usage: checker.sh ERNIC_CHECK}
[ -x "$CHECK" ] || fail "$CHECK is not executable"
ERNIC_CHECK=$CHECK	# lib.sh's check_case
: "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"
NEXT_PORT=${CHECKER_PORT_BASE:-18700}

SW=${CHECKER_SW-ernict0 127.0.0.2 ernict1 127.0.0.3}
UIO=${CHECKER_UIO-ernicu0 127.0.0.52 ernicu1 127.0.0.53}
NC=${CHECKER_NC-ernicn0 127.0.0.62 ernicn1 127.0.0.63}

# hosts GROUP "DEV0 ADDR0 DEV1 ADDR1": hosts GROUP0 and GROUP1.
hosts() {
	local d0 a0 d1 a1
	read -r d0 a0 d1 a1 <<<"$2"
	[ -n "$a1" ] || fail "$1: want \"DEV0 ADDR0 DEV1 ADDR1\", got \"$2\""
	define_host "${1}0" "$d0" "$a0"
	define_host "${1}1" "$d1" "$a1"
}

# start_server HOST OUT ARGS...: in the background (SRV_PID), listening.
start_server() {
	local h=$1 out=$2 i
	shift 2
	pick_port "$h"
	host_argv "$h"
	timeout "$APP_TIMEOUT" "${HOST_ARGV[@]}" stdbuf -oL -eL "$CHECK" \
		-d "${HOST_DEV[$h]}" -p "$PORT" "$@" >"$out" 2>&1 &
	SRV_PID=$!
	BG_PIDS+=("$SRV_PID")
	for ((i = 0; i < LISTEN_TIMEOUT * 10; i++)); do
		listening "$h" "$PORT" && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	show_output server "$out"
	fail "ernic_check server on ${HOST_DEV[$h]} did not listen on $PORT"
}

# corrupt_case LABEL SRV CLI KIND: the client flips one byte of its
# first KIND op from op 20 on (--corrupt; read: a byte of its read
# source, which the server READs); the server must FAIL with a mismatch
# line and the client must FAIL with the server's reason.
corrupt_case() {
	local label="$1 self-test $4" sh=$2 ch=$3 so=$WORK/corrupt-$4.srv
	local co=$WORK/corrupt-$4.cli src=0 crc=0 want="qp 0 c2s op [0-9]+ $4: "
	[ "$4" != read ] || want="qp [0-9]+ s2c op [0-9]+ read: READ destination "
	start_server "$sh" "$so"
	host_argv "$ch"
	timeout "$APP_TIMEOUT" "${HOST_ARGV[@]}" "$CHECK" -d "${HOST_DEV[$ch]}" \
		-p "$PORT" -n 200 --corrupt "20,$4" "${HOST_IP[$sh]}" \
		>"$co" 2>&1 || crc=$?
	wait "$SRV_PID" || src=$?
	if [ "$src" != 1 ] || [ "$crc" != 1 ] ||
		! grep -Eq "^ernic_check:   mismatch: $want" "$so" ||
		! grep -q '^ernic_check: FAIL: client: peer: server: qp ' "$co"; then
		show_output server "$so"
		show_output client "$co"
		case_failed "$label" "a corrupted $4 was not caught (server exit $src, client exit $crc)"
		return 0
	fi
	echo "ok: $label: $(grep -m1 '^ernic_check:   mismatch' "$so")"
}

# kill_case LABEL SRV CLI: the client is killed mid-run; the server, with
# --expect-error, must see every QP fail (retries exhausted) and PASS.
kill_case() {
	local label="$1 peer killed" sh=$2 ch=$3 so=$WORK/kill.srv cpid
	local co=$WORK/kill.cli src=0
	start_server "$sh" "$so" --expect-error
	host_argv "$ch"
	# timeout -s KILL: the kill -9 after 2 s of traffic (in a subshell
	# whose stderr takes bash's "Killed" notice).
	(timeout -s KILL 2 "${HOST_ARGV[@]}" "$CHECK" -d "${HOST_DEV[$ch]}" \
		-p "$PORT" -T 600 -t 20 "${HOST_IP[$sh]}" >"$co" 2>&1 || true) \
		2>/dev/null &
	cpid=$!
	BG_PIDS+=("$cpid")
	wait "$cpid" || true
	wait "$SRV_PID" || src=$?
	if [ "$src" != 0 ] ||
		! grep -Eq '^ernic_check: PASS seed=.* expected_errors=([0-9]+)/\1( |$)' "$so"; then
		show_output server "$so"
		show_output client "$co"
		case_failed "$label" "the --expect-error survivor did not pass (exit $src)"
		return 0
	fi
	echo "ok: $label: $(grep '^ernic_check: PASS' "$so")"
}

if [ -n "$SW" ]; then
	hosts sw "$SW"
	check_case sw sw0 sw1 -s 1 -q 4 -n 1000
	check_case sw sw0 sw1 -s 2 -q 16 -n 150 -m 256K -w 16
	check_case sw sw0 sw1 -s 3 -q 2 -n 40 -m 1M -w 8
	check_case sw sw0 sw1 -s 7 -q 16 -n 25 -m 1M -w 4
	check_case sw sw0 sw1 -s 8 -q 4 -n 500 -m 16K --mtu 1024 -o send,send_imm,write -r 1
	check_case sw sw0 sw1 -s 4 -q 4 -n 1500 --mtu 1024 -m 8K -o send,send_imm,inline
	check_case sw sw0 sw1 -s 5 -q 4 -n 1000 --mtu 256 -m 2K -o write,write_imm,read -r 2
	check_case sw sw1 sw0 -s 6 -q 8 -T 5
	for k in send write write_imm read; do
		corrupt_case sw sw0 sw1 "$k"
	done
	kill_case sw sw0 sw1
fi
if [ -n "$UIO" ]; then
	hosts uio "$UIO"
	check_case uio uio0 uio1 -s 11 -q 4 -n 500
	check_case uio uio0 uio1 -s 12 -q 2 -n 30 -m 1M -w 8
	[ -z "$SW" ] || check_case uio-sw uio0 sw1 -s 13 -q 4 -n 300
fi
if [ -n "$NC" ]; then
	hosts nc "$NC"
	grep -qx 'coherent=0' "$SYSFS_PATH/class/infiniband/${HOST_DEV[nc0]}/device/ernic.conf" ||
		fail "${HOST_DEV[nc0]} is not a non-coherent device"
	check_case noncoherent nc0 nc1 -s 21 -q 4 -n 500
	check_case noncoherent nc0 nc1 -s 22 -q 2 -n 30 -m 1M -w 8
fi
finish
