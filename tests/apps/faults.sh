#!/bin/bash
# SPDX-License-Identifier: MIT
# Fault tests with ernic_check (tests/checker/) between two software
# ERNICs, by default the fixture's ernict0 (127.0.0.2) and ernict1
# (127.0.0.3):
#
#  - peer killed (SIGKILL) mid-transfer, the client and then the server:
#    the survivor (--expect-error) must see retry-exceeded completions on
#    every QP within (retry_cnt + 1) QP timeouts of the kill, after at
#    least most of that time without a successful completion (so it did
#    retry, with that timeout), and exit 0;
#  - peer frozen (SIGSTOP) mid-transfer: the same; then, resumed
#    (SIGCONT), the frozen one must exit 1 within a few seconds saying
#    the peer closed the connection. Its run did not finish, so a FAIL
#    with that reason (not a hang, a crash or success) is right;
#  - peer restarted with the same QPNs while the old QPs retransmit: a
#    serving server (--serve 2) on DEV0, client 1 on DEV1 killed
#    mid-transfer, client 2 started at once on DEV1 (a new process; the
#    same QPNs: all 7 QPs of a device of the test's own) with other
#    PSNs. The server's old QPs go on resending to
#    those QPNs: their PSNs are behind client 2's expected ones in one
#    variant (duplicates: READ requests among them must not be answered)
#    and ahead in the other. Client 2 must PASS byte-exact, the old QPs
#    must end in retry-exceeded, a capture must show stale packets to
#    client 2's QPNs after it started (or the case proved nothing) and
#    no response from DEV1 carrying an old PSN. Behind, the stale packets
#    must include a READ request; the mix decides whether one was
#    outstanding when client 1 died (0 of the 4 QPs' few READs, now and
#    then), so such a run is made again, three runs at most.
#
# After each case a normal run on the same two devices must PASS.
#
# Usage: faults.sh ERNIC_CHECK. Needs the fixture's devices (tests/
# devices.sh setup) and ctest's environment. Elsewhere: FAULTS_DEVS=
# "DEV0 ADDR0 DEV1 ADDR1" (software devices on the same host), FAULTS_IFACE
# (where their packets go: lo), FAULTS_PORT_BASE (TCP ports), FAULTS_CASES
# (some of: kill stop behind ahead).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ss timeout dumpcap tshark awk
CHECK=${1:?usage: faults.sh ERNIC_CHECK}
ERNIC_CHECK=$CHECK	# lib.sh's check_case
[ -x "$CHECK" ] || fail "$CHECK is not executable"
: "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"
NEXT_PORT=${FAULTS_PORT_BASE:-18800}
IFACE=${FAULTS_IFACE:-lo}

read -r d0 a0 d1 a1 <<<"${FAULTS_DEVS:-ernict0 127.0.0.2 ernict1 127.0.0.3}"
[ -n "${a1:-}" ] || fail "FAULTS_DEVS: want \"DEV0 ADDR0 DEV1 ADDR1\""
define_host h0 "$d0" "$a0"
define_host h1 "$d1" "$a1"

NQP=4
RETRY=7
TRAFFIC=1.5	# seconds of traffic before a fault
# QP timeout of the runs that must PASS (client 2, the next runs): 8 x
# 268 ms, so a busy machine's pause (seen: 0.5 s with every QP of both
# processes idle, while others' tests ran) is not a retry-exceeded.
SAFE_TMO=16

now() { date +%s.%N; }

# bounds TIMEOUT: HI (latest error after the fault) and LO (least time
# without a successful send completion before it), in seconds. The
# model resends at 4.096 us * 2^TIMEOUT after the last ACK, RETRY times,
# then fails the QP. Margins for a loaded 2-CPU machine.
bounds() {
	read -r FULL HI LO < <(awk -v t="$1" -v r="$RETRY" 'BEGIN {
		full = (r + 1) * 4.096e-6 * 2 ^ t
		printf "%.3f %.3f %.3f\n", full, full * 1.25 + 2.5, full * 0.9 - 0.15 }')
}

# start_check VAR OUT HOST ARGS...: ernic_check in the background, its own
# pid in VAR (no wrapper: it gets the signals); waits for the listening
# port when it is a server (ARGS without an address: SRV_PORT is set).
start_check() {
	local var=$1 out=$2 h=$3 pid i
	shift 3
	host_argv "$h"
	"${HOST_ARGV[@]}" "$CHECK" -d "${HOST_DEV[$h]}" "$@" >"$out" 2>&1 </dev/null &
	pid=$!
	BG_PIDS+=("$pid")
	printf -v "$var" %s "$pid"
	[ "$var" = SRV ] || return 0
	for ((i = 0; i < LISTEN_TIMEOUT * 10; i++)); do
		listening "$h" "$SRV_PORT" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	show_output server "$out"
	fail "ernic_check server on ${HOST_DEV[$h]} did not listen on $SRV_PORT"
}

# wait_line FILE REGEX SECONDS: until FILE has a matching line.
wait_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID SECONDS: RC = its exit status, or 124 (then killed).
wait_exit() {
	local i
	RC=0
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -CONT "$1" 2>/dev/null
		stop_pid "$1"
		RC=124
		return 0
	fi
	wait "$1" 2>/dev/null || RC=$?
}

# check_errors FILE T_FAULT TIMEOUT [TAG]: NQP QPs, each failed once with
# retry (or RNR retry) exceeded after some completed ops, within HI of
# the fault and after at least LO without a successful send completion.
# Sets WHY on failure, ERRS (a summary) on success.
check_errors() {
	local f=$1 t0=$2 tag=${4:-}
	bounds "$3"
	ERRS=$(sed -nE "s/^ernic_check: ${tag}qp ([0-9]+): (send|receive) completion (transport|RNR) retry counter exceeded \(wr_id [^)]*\) after ([0-9]+) ops completed \(idle=([0-9.]+)s at=([0-9.]+)\)\$/\1 \4 \5 \6/p" "$f" |
		awk -v n="$NQP" -v t0="$t0" -v hi="$HI" -v lo="$LO" -v full="$FULL" -v r="$RETRY" '
		!($1 in seen) {
			seen[$1] = 1; k++; d = $4 - t0
			if ($2 == 0) bad = bad " qp " $1 ": no op completed before the fault;"
			if (d < 0 || d > hi) bad = bad sprintf(" qp %d: failed %.2fs after the fault (bound 0..%.2fs);", $1, d, hi)
			if ($3 < lo) bad = bad sprintf(" qp %d: failed after %.2fs without a completion (want >= %.2fs: did it retry?);", $1, $3, lo)
			if (k == 1 || d < dmin) dmin = d
			if (k == 1 || d > dmax) dmax = d
			if (k == 1 || $3 < imin) imin = $3
		}
		END {
			if (k != n) bad = bad sprintf(" %d of %d QPs failed with retries exceeded;", k, n)
			if (bad != "") { print bad; exit 1 }
			printf "%d/%d QPs retry-exceeded %.2f..%.2fs after the fault (bound %.2fs; %d x timeout = %.2fs), each >= %.2fs without a completion (>= %.2fs)\n",
				k, n, dmin, dmax, hi, r + 1, full, imin, lo
		}') && return 0
	WHY=$ERRS
	return 1
}

# fresh LABEL: a normal run on the same devices right after a fault.
fresh() {
	check_case "$1: next run" h0 h1 -q "$NQP" -n 300 --qp-timeout "$SAFE_TMO"
}

# pair_start TIMEOUT SRV_ARGS -- CLI_ARGS: server on h0, client on h1,
# both running (SRV, CLI pids; SO, CO outputs).
pair_start() {
	local srv=() tmo=$1
	shift
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	pick_port h0
	SRV_PORT=$PORT
	start_check SRV "$SO" h0 -p "$PORT" "${srv[@]}"
	start_check CLI "$CO" h1 -p "$PORT" -q "$NQP" -T 600 -t 30 \
		--qp-timeout "$tmo" --retry-cnt "$RETRY" "$@" "${HOST_IP[h0]}"
	wait_line "$SO" ': running$' 30 && wait_line "$CO" ': running$' 30 ||
		return 1
	sleep "$TRAFFIC"
	kill -0 "$SRV" 2>/dev/null && kill -0 "$CLI" 2>/dev/null
}

# fault_case LABEL KILL|STOP VICTIM(client|server) OPS: the victim gets
# the signal mid-transfer; the survivor must pass --expect-error in
# time; a frozen victim, resumed, must exit 1 promptly with the reason.
fault_case() {
	local label="$1 ($3)" sig=$2 victim=$3 ops=$4 tmo=15 t0 vpid spid sargs=() cargs=()
	SO=$WORK/${label//[^a-z]/_}.srv CO=$WORK/${label//[^a-z]/_}.cli
	if [ "$victim" = client ]; then sargs=(--expect-error); else cargs=(--expect-error); fi
	if ! pair_start "$tmo" "${sargs[@]}" -- -o "$ops" "${cargs[@]}"; then
		show_output server "$SO"
		show_output client "$CO"
		case_failed "$label" "the pair did not start or ended before the fault"
		return 0
	fi
	if [ "$victim" = client ]; then vpid=$CLI spid=$SRV; else vpid=$SRV spid=$CLI; fi
	local vout=$CO sout=$SO
	[ "$victim" = client ] || { vout=$SO; sout=$CO; }
	t0=$(now)
	kill "-$sig" "$vpid"
	# (no "Killed" notice from bash: its exit status does not matter)
	[ "$sig" != KILL ] || disown "$vpid"
	bounds "$tmo"
	wait_exit "$spid" "$(awk -v h="$HI" 'BEGIN { print int(h) + 15 }')"
	local src=$RC
	if [ "$sig" = STOP ]; then
		local tc
		# frozen at least 3 s, so the victim sees that it was (its
		# "did not run for" note wants a clock jump over 2 s)
		sleep "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { d = 3 - (b - a); print (d > 0 ? d : 0) }')"
		tc=$(now)
		kill -CONT "$vpid"
		wait_exit "$vpid" 10
		local vrc=$RC el
		el=$(awk -v a="$tc" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
		if [ "$vrc" != 1 ] ||
			! grep -Eq "^ernic_check: FAIL: $victim: the peer closed the connection before the end" "$vout" ||
			! grep -q "did not run for" "$vout"; then
			show_output "$victim (frozen, resumed)" "$vout"
			case_failed "$label" "resumed, the frozen $victim did not exit 1 promptly with the reason ($(describe_rc "$vrc") ${el}s after SIGCONT)"
		else
			echo "ok: $label: resumed, the $victim exited 1 ${el}s after SIGCONT: $(grep -m1 '^ernic_check: FAIL' "$vout")"
		fi
	else
		wait_exit "$vpid" 5
	fi
	if [ "$src" != 0 ] ||
		! grep -Eq "^ernic_check: PASS seed=.* expected_errors=$NQP/$NQP\$" "$sout"; then
		show_output "survivor ($([ "$victim" = client ] && echo server || echo client))" "$sout"
		show_output "$victim" "$vout"
		case_failed "$label" "the --expect-error survivor did not pass ($(describe_rc "$src"))"
		return 0
	fi
	if ! check_errors "$sout" "$t0" "$tmo"; then
		show_output survivor "$sout"
		case_failed "$label" "survivor's errors:$WHY"
		return 0
	fi
	echo "ok: $label: SIG$sig; survivor exit 0: $ERRS"
	fresh "$label"
}

# ---- peer restarted with the same QPNs (stale PSNs) ----

# The server's run-1 QPs start at OLD_PSN; its run-2 QPs at the case's
# PSN. Client 1 starts at 0x900000, client 2 at 0x300000. The capture
# keeps only packets with an old PSN ([0x100000, 0x180000)) and client
# 2's first 16 requests per QP (its start), so it keeps up.
OLD_PSN=0x100000
OLD_END=0x180000
C2_PSN=0x300000

stale_capture_start() { # FILE
	local filter="udp port 4791 and host ${HOST_IP[h0]} and host ${HOST_IP[h1]}"
	filter+=" and ((udp[17] & 0xf8) == 0x10 or (udp[17] == 0x30 and udp[18] == 0 and udp[19] < 16))"
	CAPTURE_LOG=$1.log
	# -s 96: headers to the RETH are enough
	timeout 300 dumpcap -q -P -s 96 -B 64 -i "$IFACE" -f "$filter" -w "$1" \
		>"$CAPTURE_LOG" 2>&1 &
	CAPTURE_PID=$!
	BG_PIDS+=("$CAPTURE_PID")
	wait_line "$CAPTURE_LOG" '^Capturing on' 10 && return 0
	show_output dumpcap "$CAPTURE_LOG"
	fail "dumpcap did not start on $IFACE"
}

# qpns FILE: the local QPNs of a checker's "QPN a..b -> c..d" line.
qpns() {
	sed -nE 's/.* QPN ([0-9]+)\.\.([0-9]+) -> .*/\1 \2/p' "$1" | head -n1
}

# stale_case LABEL NEW_PSN: see the top. NEW_PSN - OLD_PSN decides
# whether the stale packets are behind (< 2^23) or ahead.
stale_case() {
	local label="restart same QPNs: stale PSNs $1" new=$2 tmo=17 t0 rc
	local pcap=$WORK/stale-$1.pcap c2out=$WORK/stale-$1.cli2 c2rc=0
	SO=$WORK/stale-$1.srv CO=$WORK/stale-$1.cli1
	stale_capture_start "$pcap"
	if ! pair_start "$tmo" --serve 2 --expect-error-runs 1 --expect-error=retry_exc \
		--psn "$OLD_PSN,$new" -- --psn 0x900000; then
		capture_stop >/dev/null
		show_output server "$SO"
		show_output "client 1" "$CO"
		case_failed "$label" "the pair did not start or ended before the fault"
		return 0
	fi
	t0=$(now)
	kill -KILL "$CLI"
	disown "$CLI"
	wait_exit "$CLI" 5
	# client 2 at once, for longer than the old QPs retry
	bounds "$tmo"
	host_argv h1
	timeout 120 "${HOST_ARGV[@]}" "$CHECK" -d "${HOST_DEV[h1]}" -p "$SRV_PORT" \
		-q "$NQP" -T "$(awk -v h="$FULL" 'BEGIN { print int(h) + 3 }')" \
		--qp-timeout "$SAFE_TMO" --psn "$C2_PSN" "${HOST_IP[h0]}" \
		>"$c2out" 2>&1 </dev/null || c2rc=$?
	wait_exit "$SRV" 30
	rc=$RC
	capture_stop >/dev/null
	local bad=""
	[ "$c2rc" = 0 ] && grep -q '^ernic_check: PASS seed=' "$c2out" ||
		bad+=" client 2 did not PASS ($(describe_rc "$c2rc"); a mismatch there is stale data accepted);"
	[ "$rc" = 0 ] && grep -q '^ernic_check: server: PASS runs=2 passed=2 failed=0$' "$SO" ||
		bad+=" the server did not PASS both runs ($(describe_rc "$rc"));"
	grep -Eq "^ernic_check: PASS seed=.* expected_errors=$NQP/$NQP run=1\$" "$SO" ||
		bad+=" run 1 did not end in retries exceeded on every QP;"
	grep -Eq '^ernic_check: PASS seed=.* run=2$' "$SO" || bad+=" run 2 did not PASS;"
	[ "$(qpns "$CO")" = "$(qpns "$c2out")" ] && [ -n "$(qpns "$CO")" ] ||
		bad+=" client 2's QPNs ($(qpns "$c2out")) are not client 1's ($(qpns "$CO"))"
	if [ -n "$bad" ]; then
		show_output server "$SO"
		show_output "client 1" "$CO"
		show_output "client 2" "$c2out"
		case_failed "$label" "$bad"
		return 0
	fi
	if ! check_errors "$SO" "$t0" "$tmo" "run 1: "; then
		show_output server "$SO"
		case_failed "$label" "the old QPs' errors:$WHY"
		return 0
	fi
	echo "ok: $label: client 2 PASS; old QPs: $ERRS"
	stale_analyse "$label" "$pcap" "$c2out" "$1"
	fresh "$label"
}

# stale_analyse LABEL PCAP CLIENT2_OUT behind|ahead
stale_analyse() {
	local label=$1 q0 q1 qs="" q out
	read -r q0 q1 <<<"$(qpns "$3")"
	for ((q = q0; q <= q1; q++)); do qs+=" $(printf '0x%06x' "$q")"; done
	out=$(tshark -r "$2" -d 'udp.port==4791,infiniband' -T fields -e frame.time_epoch \
		-e ip.src -e infiniband.bth.opcode -e infiniband.bth.destqp \
		-e infiniband.bth.psn 2>/dev/null |
		awk -v h0="${HOST_IP[h0]}" -v h1="${HOST_IP[h1]}" -v qs="$qs " \
			-v a=$((OLD_PSN)) -v z=$((OLD_END)) -v m=$((C2_PSN)) '
		# Packets come in time order: client 2 has started at its
		# first request (PSN m..m+15 from h1).
		!start && $2 == h1 && $5 >= m && $5 < m + 16 { start = $1 }
		$5 >= a && $5 < z && $2 == h0 && $5 > maxold { maxold = $5 }
		start && $5 >= a && $5 < z {
			if ($2 == h1) { resp++; next }
			if (index(qs, " " $4 " ")) { stale++; if ($3 == 12) reads++ }
		}
		END {
			printf "%s %d %d %d %d\n", start ? start : "-", stale, reads, resp, maxold - a
		}')
	local start stale reads resp used
	read -r start stale reads resp used <<<"$out"
	echo "    capture: client 2 started at $start; then $stale packets with old PSNs to its QPNs$qs ($reads READ requests); $resp packets from ${HOST_IP[h1]} with an old PSN; old PSNs used: $used"
	if [ "$start" = - ]; then
		case_failed "$label" "no request of client 2 (PSN $C2_PSN) in the capture"
	elif [ "$used" -ge $((OLD_END - OLD_PSN - 4096)) ]; then
		case_failed "$label" "run 1 used $used PSNs: more than the capture filter's old range keeps"
	elif [ "$stale" = 0 ]; then
		case_failed "$label" "no stale packet reached client 2: the case proved nothing (QP timeout too short?)"
	elif [ "$4" = behind ] && [ "$reads" = 0 ] && [ "$STALE_TRY" -lt 3 ]; then
		# Which requests were outstanding at the kill is the mix's
		# luck: with no READ among them the case proved nothing.
		echo "    no READ request was outstanding at the kill: once more"
		STALE_AGAIN=1
	elif [ "$4" = behind ] && [ "$reads" = 0 ]; then
		case_failed "$label" "no stale READ request reached client 2 in $STALE_TRY runs"
	elif [ "$resp" != 0 ]; then
		case_failed "$label" "$resp packets from ${HOST_DEV[h1]} carried old PSNs: stale requests were answered"
	else
		echo "ok: $label: $stale stale packets ($reads READ requests) reached client 2's QPNs, none answered"
	fi
}

want() { [[ " $CASES " == *" $1 "* ]]; }
CASES=${FAULTS_CASES:-kill stop behind ahead}
if want kill; then
	fault_case "peer killed" KILL client all
	fault_case "peer killed" KILL server all
fi
# Frozen, the peer keeps its TCP connection: credits for WRITEs stop, so
# a QP waiting for them has nothing outstanding and no error to see. No
# WRITEs, then: every QP always has requests outstanding.
if want stop; then
	fault_case "peer frozen" STOP client send,send_imm,read,inline
	fault_case "peer frozen" STOP server send,send_imm,read,inline
fi
# 0x500000 - 0x100000 < 2^23: the old PSNs are behind client 2's;
# 0xd00000 - 0x100000 > 2^23: ahead.
# A run with no READ outstanding when the client died is made again
# (stale_analyse), up to three runs.
# A device hands out QP numbers round-robin (a freed one is the last
# given again): client 2 gets client 1's only when the run takes every
# RC QP of the client device, so these runs use a device of the
# smallest size (C_NUM_QP 8: QPs 2..8) and all of its 7 QPs
# (FAULTS_STALE_DEV="DEV ADDR" by hand: a device with C_NUM_QP 8).
if want behind || want ahead; then
	read -r ds as <<<"${FAULTS_STALE_DEV:-ernicst 127.0.0.31}"
	define_host h1 "$ds" "$as"
	[ -n "${FAULTS_STALE_DEV:-}" ] || add_device h1 "$as" --param C_NUM_QP=8
	NQP=7
fi
for which in behind ahead; do
	want "$which" || continue
	STALE_TRY=1 STALE_AGAIN=1
	while [ "$STALE_AGAIN" = 1 ]; do
		STALE_AGAIN=0
		if [ "$which" = behind ]; then
			stale_case behind 0x500000
		else
			stale_case ahead 0xd00000
		fi
		STALE_TRY=$((STALE_TRY + 1))
	done
done
finish
