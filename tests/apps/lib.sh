# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Helpers for the app tests: unmodified Debian programs (ibverbs-utils,
# perftest) between two software ERNICs. Sourced by tests/apps/*.sh.
#
# A "host" is where one end runs: a device, the address its peer
# connects to, and optionally a network namespace and environment
# (define_host). run_pair starts the server in the background under a
# timeout, waits until its TCP port listens, runs the client under a
# timeout, and checks both exit codes; every child is killed on exit.
#
# Tunables (environment): APP_TIMEOUT (s, per program, default 120),
# APP_KEEP=1 keeps the work directory.

set -euo pipefail

APP_TIMEOUT=${APP_TIMEOUT:-120}
LISTEN_TIMEOUT=${LISTEN_TIMEOUT:-30}
APP_NAME=$(basename "$0" .sh)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root ($*)"
}

# A missing tool is a failure, not a skip: scripts/deps.sh installs them.
need_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			fail "'$c' is not installed (scripts/deps.sh installs it)"
	done
}

WORK=$(mktemp -d "/tmp/ernic-$APP_NAME.XXXXXX")
chmod 755 "$WORK"
# tshark without the user's preferences (they could change decoding).
export WIRESHARK_CONFIG_DIR=$WORK/wireshark
BG_PIDS=()
AT_EXIT=()

# at_exit CMD...: run at exit, last registered first (words are quoted).
at_exit() {
	AT_EXIT+=("$(printf '%q ' "$@")")
}

# End a background child (a `timeout` process, which passes the signal on
# to its program): TERM, then KILL after 5 s.
stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

_app_exit() {
	local rc=$? i
	set +e
	for i in "${BG_PIDS[@]}"; do
		stop_pid "$i"
	done
	for ((i = ${#AT_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${AT_EXIT[i]}" >/dev/null 2>&1
	done
	if [ "${APP_KEEP:-0}" = 1 ]; then
		echo "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap _app_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

declare -A HOST_NS HOST_DEV HOST_IP HOST_ENV

# define_host NAME DEV IP [NETNS [VAR=VALUE...]]
define_host() {
	local name=$1
	HOST_DEV[$name]=$2
	HOST_IP[$name]=$3
	HOST_NS[$name]=${4:-}
	shift $(($# < 4 ? $# : 4))
	HOST_ENV[$name]="$*"
}

# HOST_ARGV = the prefix that runs a command on host NAME.
host_argv() {
	local name=$1 env
	HOST_ARGV=()
	[ -z "${HOST_NS[$name]}" ] || HOST_ARGV=(ip netns exec "${HOST_NS[$name]}")
	# shellcheck disable=SC2206 # VAR=VALUE words, no spaces by construction
	env=(${HOST_ENV[$name]})
	[ ${#env[@]} = 0 ] || HOST_ARGV+=(env "${env[@]}")
}

# on_host NAME CMD...: run in the foreground.
on_host() {
	local name=$1
	shift
	host_argv "$name"
	"${HOST_ARGV[@]}" "$@"
}

# TCP ports: a fresh one per server, skipping any already listening.
# run_pair waits for the server with "${PAIR_READY:-listening} HOST PORT"
# (rdma_cm servers listen on their device, not on a TCP port).
NEXT_PORT=${APP_PORT_BASE:-18600}
listening() { # HOST PORT
	[ -n "$(on_host "$1" ss -Hltn "sport = :$2")" ]
}
pick_port() { # HOST
	while listening "$1" "$NEXT_PORT"; do
		NEXT_PORT=$((NEXT_PORT + 1))
	done
	PORT=$NEXT_PORT
	NEXT_PORT=$((NEXT_PORT + 1))
}

# wait_listening HOST PORT PID: until server PID listens on PORT on HOST;
# false when it exits first or LISTEN_TIMEOUT passes.
wait_listening() {
	local i
	for ((i = 0; i < LISTEN_TIMEOUT * 10; i++)); do
		listening "$1" "$2" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# show_output LABEL FILE: a program's output, indented, for a failure.
show_output() {
	echo "---- $1 ($2) ----" >&2
	if [ -s "$2" ]; then
		tail -n 60 "$2" | sed 's/^/  | /' >&2
	else
		echo "  (no output)" >&2
	fi
}

describe_rc() {
	case $1 in
	0) echo "exit 0" ;;
	124) echo "timed out after ${APP_TIMEOUT}s" ;;
	137) echo "killed" ;;
	*) echo "exit $1" ;;
	esac
}

# run_pair LABEL SERVER_HOST CLIENT_HOST -- SERVER_CMD... -- CLIENT_CMD...
# In both commands the word @PORT@ becomes the TCP port and, in the
# client, @SERVER@ the server host's address. Sets PAIR_SERVER_OUT and
# PAIR_CLIENT_OUT; returns 1 (after printing both outputs) when either
# side fails or times out, with PAIR_TIMED_OUT=1 for a timeout.
run_pair() {
	local label=$1 sh=$2 ch=$3 srv=() cli=() a spid crc=0 src=0 i
	shift 3
	[ "${1:-}" = -- ] || fail "run_pair: missing --"
	shift
	pick_port "$sh"
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a=${1//@PORT@/$PORT}
		srv+=("$a")
		shift
	done
	[ "${1:-}" = -- ] || fail "run_pair: missing second --"
	shift
	for a in "$@"; do
		a=${a//@PORT@/$PORT}
		cli+=("${a//@SERVER@/${HOST_IP[$sh]}}")
	done
	label=${label// /_}
	PAIR_SERVER_OUT=$WORK/$label.server.out
	PAIR_CLIENT_OUT=$WORK/$label.client.out
	PAIR_TIMED_OUT=0

	host_argv "$sh"
	# timeout outermost: $! is its pid and it passes signals on.
	# stdbuf: line-buffered, so a killed program's output is not lost.
	timeout "$((APP_TIMEOUT + 30))" "${HOST_ARGV[@]}" stdbuf -oL -eL \
		"${srv[@]}" >"$PAIR_SERVER_OUT" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	for ((i = 0; i < LISTEN_TIMEOUT * 10; i++)); do
		"${PAIR_READY:-listening}" "$sh" "$PORT" && break
		if ! kill -0 "$spid" 2>/dev/null; then
			wait "$spid" || src=$?
			echo "FAIL: $label: server exited ($(describe_rc "$src")) before listening on port $PORT" >&2
			show_output "server: ${srv[*]}" "$PAIR_SERVER_OUT"
			return 1
		fi
		sleep 0.1
	done
	if ! "${PAIR_READY:-listening}" "$sh" "$PORT"; then
		echo "FAIL: $label: server not listening on port $PORT after ${LISTEN_TIMEOUT}s" >&2
		stop_pid "$spid"
		show_output "server: ${srv[*]}" "$PAIR_SERVER_OUT"
		return 1
	fi

	host_argv "$ch"
	timeout "$APP_TIMEOUT" "${HOST_ARGV[@]}" stdbuf -oL -eL "${cli[@]}" \
		>"$PAIR_CLIENT_OUT" 2>&1 </dev/null || crc=$?

	# The server ends with the client (30 s for its last completions);
	# if the client failed it may wait for ever: give it 5 s.
	local srv_state
	for ((i = 0; i < (crc == 0 ? 300 : 50); i++)); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$spid" 2>/dev/null; then
		stop_pid "$spid"
		src=124
		srv_state="still running $((i / 10))s after the client ended: killed"
	else
		wait "$spid" || src=$?
		srv_state=$(describe_rc "$src")
	fi
	PAIR_CRC=$crc PAIR_SRC=$src
	if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
		# A hang (not an error) stops the whole run: see case_failed.
		if [ "$crc" = 124 ] || { [ "$crc" = 0 ] && [ "$src" = 124 ]; }; then
			PAIR_TIMED_OUT=1
		fi
		echo "FAIL: $label: client $(describe_rc "$crc"), server $srv_state" >&2
		show_output "server on ${HOST_DEV[$sh]}: ${srv[*]}" "$PAIR_SERVER_OUT"
		show_output "client on ${HOST_DEV[$ch]}: ${cli[*]}" "$PAIR_CLIENT_OUT"
		return 1
	fi
	return 0
}

# Failures are collected so one run reports every broken case; a
# timeout stops the run (the next cases would most likely hang too).
FAILURES=()
case_failed() { # LABEL REASON
	FAILURES+=("$1: $2")
	echo "FAIL: $1: $2" >&2
	if [ "${PAIR_TIMED_OUT:-0}" = 1 ]; then
		finish
	fi
}

finish() {
	if [ ${#FAILURES[@]} -gt 0 ]; then
		echo "==== $APP_NAME: ${#FAILURES[@]} failure(s):" >&2
		printf '  %s\n' "${FAILURES[@]}" >&2
		exit 1
	fi
	echo "PASS"
	exit 0
}

# ---- ibv_rc_pingpong ----

# pingpong_case LABEL SRV CLI SIZE MTU ITERS: one exchange with -c, both
# sides' output checked: GIDs, byte count, no "invalid data". The words
# of PINGPONG_EXTRA (e.g. -e) are added on both sides.
pingpong_case() {
	local label="$1 size=$4 mtu=$5" sh=$2 ch=$3 size=$4 mtu=$5 iters=$6 f
	local common=(-g 0 -c -s "$size" -m "$mtu" -n "$iters" -p @PORT@)
	# shellcheck disable=SC2206 # option words, no spaces by construction
	common+=(${PINGPONG_EXTRA:-})
	local bytes=$((size * iters * 2)) h own peer
	if ! run_pair "$label" "$sh" "$ch" \
		-- ibv_rc_pingpong -d "${HOST_DEV[$sh]}" "${common[@]}" \
		-- ibv_rc_pingpong -d "${HOST_DEV[$ch]}" "${common[@]}" @SERVER@; then
		if pingpong_end_race "$iters" "$bytes"; then
			echo "note: $label: the FAIL above is ibv_rc_pingpong's end race, not a loss: one side" \
				"received and checked all $iters messages and left; the ACK of the other's last" \
				"SEND was dropped, and its retries met no QP (the program has no final barrier)"
			return 0
		fi
		case_failed "$label" "ibv_rc_pingpong failed"
		return 0
	fi
	for f in "$PAIR_SERVER_OUT" "$PAIR_CLIENT_OUT"; do
		if [ "$f" = "$PAIR_SERVER_OUT" ]; then h=$sh peer=$ch; else h=$ch peer=$sh; fi
		own=${HOST_IP[$h]} peer=${HOST_IP[$peer]}
		if ! grep -Eq "^  local address: .* GID ::ffff:${own//./\\.}\$" "$f" ||
			! grep -Eq "^  remote address: .* GID ::ffff:${peer//./\\.}\$" "$f"; then
			show_output "$(basename "$f")" "$f"
			case_failed "$label" "$(basename "$f"): local/remote GIDs are not ::ffff:$own / ::ffff:$peer"
			return 0
		fi
		if ! grep -Eq "^$bytes bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec\$" "$f" ||
			! grep -Eq "^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" "$f"; then
			show_output "$(basename "$f")" "$f"
			case_failed "$label" "$(basename "$f"): no '$bytes bytes in ...' / '$iters iters in ...' line"
			return 0
		fi
	done
	if grep -q 'invalid data' "$PAIR_CLIENT_OUT"; then
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "$label" "client found invalid data (-c)"
		return 0
	fi
	echo "ok: ibv_rc_pingpong $label ${HOST_DEV[$sh]} <- ${HOST_DEV[$ch]}: $(grep -E '^[0-9]+ bytes in' "$PAIR_CLIENT_OUT")"
}

# Under loss only (LOSS_END_RACE=1): one side's last SEND failed with
# retries exhausted after the other side had received, checked (-c) and
# counted every message and exited cleanly. All data arrived; only an
# ACK was lost once nobody was left to repeat it.
pingpong_end_race() { # ITERS BYTES
	local ok_out bad_out
	[ "${LOSS_END_RACE:-0}" = 1 ] || return 1
	if [ "$PAIR_SRC" = 0 ] && [ "$PAIR_CRC" = 1 ]; then
		ok_out=$PAIR_SERVER_OUT bad_out=$PAIR_CLIENT_OUT
	elif [ "$PAIR_CRC" = 0 ] && [ "$PAIR_SRC" = 1 ]; then
		ok_out=$PAIR_CLIENT_OUT bad_out=$PAIR_SERVER_OUT
	else
		return 1
	fi
	grep -Eq "^$1 iters in [0-9.]+ seconds" "$ok_out" &&
		grep -Eq "^$2 bytes in [0-9.]+ seconds" "$ok_out" &&
		! grep -q 'invalid data' "$ok_out" "$bad_out" &&
		grep -Eq '^Failed status transport retry counter exceeded \(12\) for wr_id 2$' "$bad_out"
}

# pingpong_matrix LABEL SRV CLI MTU: sizes 1, 16 (inline: max_inline_data
# is 16), 17, PMTU-1, PMTU, PMTU+1 and 1 MiB.
pingpong_matrix() {
	local label=$1 sh=$2 ch=$3 mtu=$4 s iters
	for s in 1 16 17 $((mtu - 1)) "$mtu" $((mtu + 1)) 1048576; do
		iters=${PINGPONG_ITERS:-200}
		[ "$s" -lt 1048576 ] || iters=${PINGPONG_BIG_ITERS:-20}
		pingpong_case "$label" "$sh" "$ch" "$s" "$mtu" "$iters"
	done
}

# ---- perftest ----

# check_perftest_table FILE KIND ITERS SIZES...: the client's result
# table has one row per size, all numeric, iterations as asked and a
# positive message rate (bw) or average latency (lat). KIND is bw or lat.
check_perftest_table() {
	local f=$1 kind=$2 iters=$3
	shift 3
	awk -v kind="$kind" -v iters="$iters" -v sizes="$*" '
	BEGIN { n = split(sizes, want, " "); for (i = 1; i <= n; i++) need[want[i]] = 1 }
	/^ #bytes/ { hdr = 1; next }
	hdr && /^ *[0-9]+ +[0-9]+ / {
		ncol = (kind == "bw") ? 5 : 9
		if (NF != ncol) { print "row with " NF " columns, want " ncol ": " $0; bad = 1; next }
		for (i = 1; i <= NF; i++) {
			# t_stdev: perftest squares deviations in an int, so
			# one > 46 ms (a retransmission timeout) gives -nan.
			if (kind == "lat" && i == 7 && $i ~ /^-?nan$/) {
				print "note: size " $1 ": t_stdev " $i " (a deviation over 46 ms: t_max " $4 " us)" > "/dev/stderr"
				continue
			}
			if ($i !~ /^[0-9]+(\.[0-9]+)?$/) { print "not a number: " $i " in: " $0; bad = 1; next }
		}
		if ($2 != iters) { print "iterations " $2 ", want " iters ": " $0; bad = 1 }
		# bw: the message rate (6 decimals; MB/s has 2, 0.00 for tiny
		# sizes at low rates); lat: the average latency.
		v = (kind == "bw") ? $5 : $6
		if (v + 0 <= 0) { print (kind == "bw" ? "message rate" : "average latency") " is not positive: " $0; bad = 1 }
		if (!($1 in need)) { print "unexpected size " $1; bad = 1 }
		seen[$1]++
	}
	END {
		for (s in need) if (seen[s] != 1) { print "size " s ": " (seen[s] + 0) " rows"; bad = 1 }
		exit bad
	}' "$f"
}

# perftest_case LABEL SRV CLI PROG ITERS ARGS...: PROG (ib_write_bw ...)
# on both ends with -d DEV -x 0 (GID index 0: the RoCE v2 IPv4 GID)
# -F -n ITERS ARGS; sizes are 2..2^23 with -a, else the -s value.
perftest_case() {
	local label="$1 $4" sh=$2 ch=$3 prog=$4 iters=$5 kind sizes=() i
	shift 5
	local args=(-x 0 -F -n "$iters" -p @PORT@ "$@")
	case $prog in
	*_bw) kind=bw ;;
	*_lat) kind=lat ;;
	*) fail "perftest_case: unknown program $prog" ;;
	esac
	if [[ " $* " == *" -a "* ]]; then
		for ((i = 1; i <= 23; i++)); do sizes+=($((1 << i))); done
	else
		for ((i = 1; i <= $#; i++)); do
			[ "${!i}" != -s ] || { i=$((i + 1)); sizes+=("${!i}"); }
		done
		[ ${#sizes[@]} = 1 ] || fail "perftest_case: give -a or one -s"
	fi
	if ! run_pair "$label" "$sh" "$ch" \
		-- "$prog" -d "${HOST_DEV[$sh]}" "${args[@]}" \
		-- "$prog" -d "${HOST_DEV[$ch]}" "${args[@]}" @SERVER@; then
		case_failed "$label" "$prog failed"
		return 0
	fi
	local why
	if ! why=$(check_perftest_table "$PAIR_CLIENT_OUT" "$kind" "$iters" "${sizes[@]}"); then
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "$label" "$prog result table: $(tr '\n' ';' <<<"$why")"
		return 0
	fi
	if ! grep -Eq "Device +: ${HOST_DEV[$ch]}\b" "$PAIR_CLIENT_OUT" ||
		! grep -Eq 'Link type +: Ethernet' "$PAIR_CLIENT_OUT"; then
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "$label" "$prog did not report device ${HOST_DEV[$ch]} on Ethernet"
		return 0
	fi
	echo "ok: $label ${HOST_DEV[$sh]} <- ${HOST_DEV[$ch]} ($(grep -Eo 'Mtu +: [0-9]+' "$PAIR_CLIENT_OUT" | head -n1 | tr -s ' '))"
	awk '/^ #bytes/ { p = 1 } p && /^ *[0-9#]/ { print "    " $0 }' "$PAIR_CLIENT_OUT"
}

PERFTEST_PROGS=(ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat)

# perftest_all LABEL SRV CLI: the six programs with -a.
perftest_all() {
	local p
	for p in "${PERFTEST_PROGS[@]}"; do
		perftest_case "$1" "$2" "$3" "$p" "${PERFTEST_ITERS:-200}" -a
	done
}

# ---- ernic_check: the byte-exact data check ----

# ernic_check (tests/checker/) verifies every byte, immediate and
# completion; ibv_rc_pingpong -c looks at one byte per page and never
# fails, so it is no data check. ERNIC_CHECK is the binary (ctest sets
# it).

# check_counts FILE: the PASS line without what differs between sides.
check_counts() {
	grep -E '^ernic_check: PASS seed=' "$1" | tail -n1 |
		sed -E 's/ (bytes_verified|rnr_waits|elapsed|invalid_rx)=[^ ]*//g'
}

# check_case LABEL SRV CLI ARGS...: ernic_check, the server taking the
# client's options (ARGS); both must PASS with the same counts and more
# than 0 ops.
check_case() {
	local label=$1 sh=$2 ch=$3 s c
	shift 3
	: "${ERNIC_CHECK:?ERNIC_CHECK (the ernic_check binary) is not set}"
	if ! run_pair "$label" "$sh" "$ch" \
		-- "$ERNIC_CHECK" -d "${HOST_DEV[$sh]}" -p @PORT@ \
		-- "$ERNIC_CHECK" -d "${HOST_DEV[$ch]}" -p @PORT@ "$@" @SERVER@; then
		case_failed "$label" "ernic_check failed"
		return 0
	fi
	s=$(check_counts "$PAIR_SERVER_OUT")
	c=$(check_counts "$PAIR_CLIENT_OUT")
	if [ -z "$c" ] || [ "$s" != "$c" ] || [[ "$c" == *" ops=0 "* ]]; then
		show_output server "$PAIR_SERVER_OUT"
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "$label" "the PASS lines are missing or disagree: '$s' / '$c'"
		return 0
	fi
	echo "ok: $label ${HOST_DEV[$sh]} <- ${HOST_DEV[$ch]} ($*): $(grep -E '^ernic_check: PASS' "$PAIR_CLIENT_OUT")"
}

# ---- software devices ----

# add_device HOST ADDR [ernicctl add options...]: create HOST's device
# (named HOST_DEV) in its namespace and rundir; removed at exit.
add_device() {
	local h=$1 addr=$2
	shift 2
	on_host "$h" "$ERNICCTL" del "${HOST_DEV[$h]}" >/dev/null 2>&1 || true
	on_host "$h" "$ERNICCTL" add "${HOST_DEV[$h]}" --sw "$addr" "$@" ||
		fail "cannot create ${HOST_DEV[$h]} on $addr"
	host_argv "$h"
	at_exit "${HOST_ARGV[@]}" "$ERNICCTL" del "${HOST_DEV[$h]}"
}

# add_local_devices NAME ADDR [NAME ADDR...]: software devices in an
# overlay of the test's own (ERNIC_RUNDIR under WORK), removed at exit,
# with ernicctl env in effect: one program here may open them all.
add_local_devices() {
	export ERNIC_RUNDIR=$WORK/run
	mkdir -p "$ERNIC_RUNDIR"
	while [ $# -ge 2 ]; do
		"$ERNICCTL" add "$1" --sw "$2" >/dev/null ||
			fail "ernicctl add $1 --sw $2"
		at_exit env "ERNIC_RUNDIR=$ERNIC_RUNDIR" "$ERNICCTL" del "$1"
		shift 2
	done
	eval "$("$ERNICCTL" env)"
}

# ---- capture ----

# capture_start HOST IFACE FILE PEER1 PEER2: dumpcap of UDP 4791 between
# two hosts' addresses (other tests may use lo at the same time) on
# IFACE, in HOST's namespace, until capture_stop; waits until it runs.
capture_start() {
	local h=$1 ifc=$2 file=$3 i
	local filter="udp port 4791 and host ${HOST_IP[$4]} and host ${HOST_IP[$5]}"
	host_argv "$h"
	CAPTURE_LOG=$file.log
	# -P: pcap (not pcapng) for libpcap-based icrc_check; -B: 64 MiB
	# kernel buffer so bursts are not dropped.
	timeout 1800 "${HOST_ARGV[@]}" dumpcap -q -P -B 64 -i "$ifc" \
		-f "$filter" -w "$file" >"$CAPTURE_LOG" 2>&1 &
	CAPTURE_PID=$!
	BG_PIDS+=("$CAPTURE_PID")
	for ((i = 0; i < 100; i++)); do
		grep -q "^Capturing on" "$CAPTURE_LOG" && return 0
		kill -0 "$CAPTURE_PID" 2>/dev/null || break
		sleep 0.1
	done
	show_output dumpcap "$CAPTURE_LOG"
	fail "dumpcap did not start on $ifc"
}

# capture_stop: end dumpcap; fail if it dropped packets.
capture_stop() {
	sleep 0.5 # the last packets in flight
	kill -INT "$CAPTURE_PID" 2>/dev/null || true
	wait "$CAPTURE_PID" || true
	cat "$CAPTURE_LOG"
	if grep -Eq 'dropped on interface .*: [0-9]+/[1-9]' "$CAPTURE_LOG"; then
		fail "dumpcap dropped packets: the capture is incomplete"
	fi
}

# check_capture FILE FRAME_MODE OPCODE_GROUPS...: tshark decodes every
# UDP 4791 packet as InfiniBand with no malformed packet and no error
# (IPv4 header checksums verified; UDP checksums too in frame mode,
# where the model writes them), icrc_check verifies every ICRC, and each
# opcode pattern (an extended regex over 0x%02x opcodes, e.g. '0x0[0-5]'
# for any SEND) occurs. The opcodes are icrc_check's count: it cuts the
# UDP GSO trains that lo and veths carry whole (the udp wire sends a
# message's packets so) and counts every packet, where tshark decodes a
# train as its first packet.
# The payload is the application's bytes: tshark's guesses at what they
# carry (InfiniBand payload heuristics) are off. Seen in CI: ib_read_lat's
# 2-byte READ responses, from a buffer perftest never writes, began with
# 0xD28B, which eth_over_ib took for an EtherType (AVSP) and called
# malformed.
IB_PAYLOAD_HEURISTICS=(smcr_infiniband smb_direct_infiniband nvme_rdma
	eth_over_ib sdp_infiniband fc_infiniband iser_infiniband mellanox_eoib)
check_capture() {
	local f=$1 frame=$2 n_udp n_ib n_err ops g out h
	shift 2
	local prefs=(-o ip.check_checksum:TRUE -d 'udp.port==4791,infiniband')
	for h in "${IB_PAYLOAD_HEURISTICS[@]}"; do
		prefs+=(--disable-heuristic "$h")
	done
	[ "$frame" = 0 ] || prefs+=(-o udp.check_checksum:TRUE)
	n_udp=$(tshark -r "$f" "${prefs[@]}" -Y 'udp.dstport == 4791' 2>/dev/null | wc -l)
	n_ib=$(tshark -r "$f" "${prefs[@]}" -Y 'udp.dstport == 4791 && infiniband.bth' 2>/dev/null | wc -l)
	n_err=$(tshark -r "$f" "${prefs[@]}" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | tee "$f.errors" | wc -l)
	echo "tshark: $n_udp RoCEv2 packets, $n_ib decoded as InfiniBand BTH, $n_err malformed/error"
	[ "$n_udp" -gt 0 ] || fail "$f: no RoCEv2 packets captured"
	[ "$n_ib" = "$n_udp" ] || fail "$f: only $n_ib of $n_udp packets decode as InfiniBand"
	if [ "$n_err" != 0 ]; then
		head -n 20 "$f.errors" >&2
		fail "$f: $n_err malformed packets or expert errors"
	fi
	# --require-model: the model's roce_icrc() must agree too (the
	# selftest, which has no model traffic, sets ICRC_CHECK_ARGS).
	# shellcheck disable=SC2086
	if ! out=$("$ICRC_CHECK" ${ICRC_CHECK_ARGS---require-model} "$f" 2>&1); then
		echo "$out"
		fail "$f: ICRC check failed"
	fi
	echo "$out"
	ops=$(sed -nE 's/^icrc_check: +[^ ]+ +\((0x[0-9a-f]{2})\) ([0-9]+)$/\2 \1/p' <<<"$out" |
		awk '{ printf "%7d %s\n", $1, $2 }')
	echo "opcodes (count hex):"
	awk '{ print "    " $0 }' <<<"$ops"
	for g in "$@"; do
		grep -Eq " ($g)\$" <<<"$ops" || fail "$f: no packet with an opcode matching $g"
	done
}

# Every RC opcode traffic_mix must produce: SEND FIRST/MIDDLE/LAST/ONLY,
# WRITE FIRST/MIDDLE/LAST/ONLY, READ request, READ response FIRST/
# MIDDLE/LAST/ONLY, ACK.
MIX_OPCODES=(0x00 0x01 0x02 0x04 0x06 0x07 0x08 0x0a 0x0c 0x0d 0x0e 0x0f 0x10 0x11)

# traffic_mix LABEL SRV CLI MTU: a little of everything, 20 iterations
# each: pingpong in one packet and in two, 64 KiB SEND/WRITE/READ
# (segmented), 2-byte WRITE and READ (single packets).
traffic_mix() {
	local p
	pingpong_case "$1" "$2" "$3" 17 "$4" 20
	pingpong_case "$1" "$2" "$3" $(($4 + 1)) "$4" 20
	for p in ib_send_bw ib_write_bw ib_read_bw; do
		perftest_case "$1" "$2" "$3" "$p" 20 -s 65536
	done
	perftest_case "$1" "$2" "$3" ib_write_lat 20 -s 2
	perftest_case "$1" "$2" "$3" ib_read_lat 20 -s 2
}

# captured LABEL SRV CLI MTU CAPTURE_HOST IFACE FRAME_MODE: traffic_mix
# under dumpcap on IFACE (in CAPTURE_HOST's namespace), then
# check_capture with MIX_OPCODES.
captured() {
	local pcap=$WORK/$1.pcap nfail=${#FAILURES[@]}
	capture_start "$5" "$6" "$pcap" "$2" "$3"
	traffic_mix "$1" "$2" "$3" "$4"
	capture_stop
	[ ${#FAILURES[@]} = "$nfail" ] || finish # no point checking a failed run
	check_capture "$pcap" "$7" "${MIX_OPCODES[@]}"
	echo "ok: $1 capture checked"
}

# ---- network namespaces ----

# make_netns NS...: fresh namespaces with lo up, deleted at exit.
make_netns() {
	local ns
	for ns in "$@"; do
		ip netns del "$ns" 2>/dev/null || true
		ip netns add "$ns" || fail "cannot create network namespace $ns"
		at_exit ip netns del "$ns"
		ip -n "$ns" link set lo up
	done
}

# veth_pair NS_A IF_A ADDR_A/LEN NS_B IF_B ADDR_B/LEN: a veth pair,
# addressed (unless the address is "-") and up.
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" ||
		fail "cannot create veth $2/$5"
	[ "$3" = - ] || ip -n "$1" addr add "$3" dev "$2"
	[ "$6" = - ] || ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# netns_host NAME DEV ADDR NS: a host in NS with its own overlay
# (ERNIC_RUNDIR and SYSFS_PATH under $WORK: libibverbs there sees only
# the devices of its namespace) and a frame-wire device DEV on ADDR.
netns_host() {
	local run=$WORK/run-$1
	define_host "$1" "$2" "$3" "$4" "ERNIC_RUNDIR=$run" "SYSFS_PATH=$run/sysfs"
	add_device "$1" "$3" --wire frame
	on_host "$1" ibv_devices | grep -qw "$2" ||
		fail "ibv_devices in namespace $4 does not list $2"
}

# ---- packet loss (nftables) ----

# The loss rule's table: LOSS_NS (namespace, empty for the init one),
# LOSS_TABLE ("FAMILY NAME") and LOSS_CHAIN. Its rules count every
# RoCEv2 packet (comment "seen") and drop 1% at random ("dropped").

# loss_chain CHAIN_NAME HOOK_SPEC [MATCH]: the chain's text.
loss_chain() {
	cat <<EOT
	chain $1 {
		$2; policy accept;
		${3:-} udp dport 4791 counter comment "seen"
		${3:-} udp dport 4791 numgen random mod 100 0 counter drop comment "dropped"
	}
EOT
}

# loss_install HOOK_SPEC [MATCH]: create LOSS_TABLE with LOSS_CHAIN
# (deleted at exit); MATCH narrows the rules (e.g. to some addresses).
loss_install() {
	local nft=(nft)
	[ -z "$LOSS_NS" ] || nft=(ip netns exec "$LOSS_NS" nft)
	# shellcheck disable=SC2086 # "FAMILY NAME"
	"${nft[@]}" delete table $LOSS_TABLE 2>/dev/null || true
	# shellcheck disable=SC2086
	at_exit "${nft[@]}" delete table $LOSS_TABLE
	{
		echo "table $LOSS_TABLE {"
		loss_chain "$LOSS_CHAIN" "$1" "${2:-}"
		echo "}"
	} | "${nft[@]}" -f - || fail "cannot install the nftables loss rule ($LOSS_TABLE)"
	# shellcheck disable=SC2086
	"${nft[@]}" list table $LOSS_TABLE
}

# loss_counter COMMENT: packets counted so far by that rule.
loss_counter() {
	local nft=(nft) n
	[ -z "$LOSS_NS" ] || nft=(ip netns exec "$LOSS_NS" nft)
	# shellcheck disable=SC2086
	n=$("${nft[@]}" list chain $LOSS_TABLE "$LOSS_CHAIN" |
		awk -v c="comment \"$1\"" 'index($0, c) {
			for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }')
	[[ "$n" =~ ^[0-9]+$ ]] || fail "cannot read the '$1' counter of $LOSS_TABLE"
	echo "$n"
}

# lossy LABEL CMD...: run one case, print what the rule did meanwhile;
# a case of at least 2000 packets with no drop fails (0.99^2000 < 1e-8:
# the rule is not working).
lossy() {
	local label=$1 s0 d0 s1 d1 nfail=${#FAILURES[@]}
	shift
	s0=$(loss_counter seen) d0=$(loss_counter dropped)
	"$@"
	s1=$(loss_counter seen) d1=$(loss_counter dropped)
	echo "    $label: the rule dropped $((d1 - d0)) of $((s1 - s0)) RoCEv2 packets"
	if [ ${#FAILURES[@]} = "$nfail" ] && [ $((s1 - s0)) -ge 2000 ] && [ $((d1 - d0)) = 0 ]; then
		case_failed "$label" "$((s1 - s0)) packets and not one dropped"
	fi
}

# loss_suite LABEL SRV CLI MTU: under the loss rule, ernic_check (every
# byte, immediate and completion of every opcode, 8 QPs, messages up to
# 64 KiB at the path MTU MTU); ib_write_bw, ib_send_bw, ib_read_bw at
# 64 KiB (LOSS_ITERS, default 500) and ibv_rc_pingpong at 17, MTU+1 and
# 64 KiB, unmodified programs that must get through (pingpong's -c is
# no data check); then the rule must have dropped some.
loss_suite() {
	local p s seen dropped
	lossy "$1 ernic_check" check_case "$1" "$2" "$3" -q 8 -n "${LOSS_CHECK_OPS:-300}" \
		-m 64K --mtu "$4" -t 60
	for p in ib_write_bw ib_send_bw ib_read_bw; do
		lossy "$1 $p 64KiB" perftest_case "$1" "$2" "$3" "$p" "${LOSS_ITERS:-500}" -s 65536
	done
	for s in 17 $(($4 + 1)) 65536; do
		LOSS_END_RACE=1 lossy "$1 ibv_rc_pingpong $s" pingpong_case "$1" "$2" "$3" "$s" "$4" "${LOSS_PINGPONG_ITERS:-200}"
	done
	seen=$(loss_counter seen) dropped=$(loss_counter dropped)
	echo "nftables $LOSS_TABLE: dropped $dropped of $seen RoCEv2 packets in all"
	[ "$dropped" -gt 0 ] || case_failed "$1" "the loss rule dropped no packet (of $seen): loss was not tested"
}
