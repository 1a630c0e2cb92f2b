#!/bin/bash
# SPDX-License-Identifier: MIT
# One device, many processes (docs/multiprocess.md), on the fixture's
# software devices ernict0 (127.0.0.2) and ernict1 (127.0.0.3), or with
# "vfpga" on its virtual FPGAs ernicu0 (127.0.0.52) and ernicu1
# (127.0.0.53), which processes share through each device's broker:
#   1. four unmodified ib_write_bw pairs at once: every one completes,
#      and during the run `ernicctl show` lists four processes per device,
#      each with a QP of its own;
#   2. the byte-exact checker in three process pairs at once, one client
#      SIGKILLed mid-transfer: the other two pairs PASS, and the dead
#      process's QPs and MRs are reclaimed;
#   3. 200 processes opening and closing device A, 10 at a time
#      (ibv_devinfo -v): every one succeeds, and the device is left with
#      nobody on it and nothing to reclaim;
#   4. rdma_cm beside verbs: an ib_write_bw pair and two rping pairs (our
#      librdmacm) at once on the same two devices, the ib_write_bw server
#      the first process on device A (so QP1's owner on a software
#      device): each CM MAD must reach its connection's process. A third
#      rping server on a port already listened to is refused.
#   usage: share.sh ERNIC_CHECK [sw|vfpga]
#   environment: ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH, RDMAV_DRIVERS
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod, and eBPF"
need_cmds ib_write_bw ibv_devinfo rping ss pgrep timeout
CHECK=${1:?usage: share.sh ERNIC_CHECK [sw|vfpga]}
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"
case "${2:-sw}" in
sw) A=ernict0 AIP=127.0.0.2 B=ernict1 BIP=127.0.0.3 ;;
vfpga) A=ernicu0 AIP=127.0.0.52 B=ernicu1 BIP=127.0.0.53 ;;
*) fail "usage: share.sh ERNIC_CHECK [sw|vfpga]" ;;
esac
define_host a "$A" "$AIP"
define_host b "$B" "$BIP"

field() { # DEV WORD
	"$ERNICCTL" show "$1" | awk -v w="$2" '$1 == w { print $2 }'
}

indent() {
	sed 's/^/    /'
}

# 1. four ib_write_bw pairs
N=4
spids=() cpids=() ports=()
for ((k = 0; k < N; k++)); do
	pick_port a
	ports+=("$PORT")
	timeout 120 ib_write_bw -d "$A" -x 0 -D 4 -p "$PORT" \
		>"$WORK/bw$k.srv" 2>&1 &
	spids+=($!)
	BG_PIDS+=($!)
	wait_listening a "$PORT" "${spids[k]}" ||
		{ show_output "server $k" "$WORK/bw$k.srv"; fail "ib_write_bw server $k did not listen"; }
done
for ((k = 0; k < N; k++)); do
	timeout 120 ib_write_bw -d "$B" -x 0 -D 4 -p "${ports[k]}" "$AIP" \
		>"$WORK/bw$k.cli" 2>&1 &
	cpids+=($!)
	BG_PIDS+=($!)
done
for ((i = 0; i < 50; i++)); do
	[ "$(field "$A" qps)" = "$N" ] && [ "$(field "$B" qps)" = "$N" ] && break
	sleep 0.1
done
show=$("$ERNICCTL" show "$A")
echo "four ib_write_bw pairs running, ernicctl show $A:"
indent <<<"$show"
if ! grep -qx "processes $N" <<<"$show" || ! grep -qx "qps $N" <<<"$show"; then
	case_failed "four ib_write_bw" "$A does not show $N processes with a QP each"
fi
# perftest_ok FILE RC: the run went through. perftest times its report
# with the CPU's cycle counter, which it first calibrates against the
# clock; with eight busy-polling programs on two CPUs that calibration
# can fail ("Correlation coefficient r^2 ... Can't produce a report")
# after all the traffic went through. That alone is not the device's
# failure; any error of the transfer itself is. A client that cannot
# report exits without the closing exchange, and its server (PEER: the
# client's output) then fails only that exchange.
perftest_ok() { # FILE RC [PEER]
	[ "$2" = 0 ] && return 0
	grep -q 'BW average' "$1" || return 1
	if grep -q "Can't produce a report" "$1"; then
		grep -qiE 'error|couldn.t|failed|unable' "$1" && return 1
		return 0
	fi
	[ -n "${3:-}" ] && grep -q "Can't produce a report" "$3" &&
		grep -q 'Failed to exchange data between server and clients' "$1" &&
		! grep -vE "ethernet_read_keys: Couldn't read remote address|Unable to read to socket/rdma_cm|Failed to exchange data between server and clients" "$1" |
			grep -qiE 'error|couldn.t|failed|unable'
}

total=0 reports=0
for ((k = 0; k < N; k++)); do
	rc=0 src=0
	wait "${cpids[k]}" || rc=$?
	wait "${spids[k]}" || src=$?
	line=$(awk '$1 == 65536 { print; exit }' "$WORK/bw$k.cli")
	if perftest_ok "$WORK/bw$k.cli" "$rc" &&
		perftest_ok "$WORK/bw$k.srv" "$src" "$WORK/bw$k.cli" && [ -z "$line" ]; then
		echo "ok: ib_write_bw pair $k: done; perftest could not calibrate its clock for the report (exit $rc/$src)"
		continue
	fi
	if [ "$rc" != 0 ] || [ "$src" != 0 ] || [ -z "$line" ]; then
		show_output "server $k" "$WORK/bw$k.srv"
		show_output "client $k" "$WORK/bw$k.cli"
		case_failed "four ib_write_bw" "pair $k: client $(describe_rc "$rc"), server $(describe_rc "$src")"
		continue
	fi
	echo "ok: ib_write_bw pair $k: $line"
	reports=$((reports + 1))
	total=$(awk -v t="$total" -v l="$line" 'BEGIN { split(l, f); print t + f[4] }')
done
[ "$reports" -gt 0 ] ||
	case_failed "four ib_write_bw" "no pair could report its bandwidth"
echo "four ib_write_bw pairs at once: $total MB/s in all from $reports reports (bench/share.sh measures)"

# 2. the checker in three process pairs, one client killed
spids=() cpids=() ports=()
for ((k = 0; k < 3; k++)); do
	pick_port a
	ports+=("$PORT")
	timeout 120 stdbuf -oL "$CHECK" -d "$A" -p "$PORT" >"$WORK/chk$k.srv" 2>&1 &
	spids+=($!)
	BG_PIDS+=($!)
	wait_listening a "$PORT" "${spids[k]}" ||
		{ show_output "checker server $k" "$WORK/chk$k.srv"; fail "ernic_check server $k did not listen"; }
done
for ((k = 0; k < 3; k++)); do
	timeout 120 stdbuf -oL "$CHECK" -d "$B" -p "${ports[k]}" -q 2 -T 4 \
		--qp-timeout 12 "$AIP" >"$WORK/chk$k.cli" 2>&1 &
	cpids+=($!)
	BG_PIDS+=($!)
done
sleep 1.5
reaped=$(field "$B" reaped)
# (under set -e a pgrep that finds nobody would end the script silently)
victim=$(pgrep -P "${cpids[1]}" -f ernic_check || pgrep -P "${cpids[1]}" || true)
if [ -z "$victim" ]; then
	show_output "checker server 1" "$WORK/chk1.srv"
	show_output "checker client 1" "$WORK/chk1.cli"
	fail "no ernic_check under ${cpids[1]}: checker client 1 ended before it was to be killed"
fi
kill -9 "$victim"
# SIGKILL is delivered when the victim next runs: wait until it has
for ((i = 0; i < 50; i++)); do
	[ "$(awk '{ print $3 }' "/proc/$victim/stat" 2>/dev/null)" = Z ] && break
	[ -e "/proc/$victim" ] || break
	sleep 0.1
done
# Reaped by `ernicctl show` itself on a software device ("now 1"), by
# the device's broker on a virtual FPGA, as soon as the process is gone.
for ((i = 0; i < 30; i++)); do
	show=$("$ERNICCTL" show "$B")
	grep -qx 'processes 2' <<<"$show" && break
	sleep 0.1
done
echo "checker client 1 killed, ernicctl show $B:"
indent <<<"$show"
if ! grep -qx 'processes 2' <<<"$show" || ! grep -qx 'qps 4' <<<"$show" ||
	! grep -qx "reaped $((reaped + 1)) (now [01])" <<<"$show"; then
	case_failed "checker, one killed" "$B does not show the 2 live clients' 4 QPs with the dead one reaped"
fi
for k in 0 2; do
	rc=0 src=0
	wait "${cpids[k]}" || rc=$?
	wait "${spids[k]}" || src=$?
	if [ "$rc" != 0 ] || [ "$src" != 0 ] ||
		! grep -q '^ernic_check: PASS' "$WORK/chk$k.cli"; then
		show_output "checker server $k" "$WORK/chk$k.srv"
		show_output "checker client $k" "$WORK/chk$k.cli"
		case_failed "checker, one killed" "pair $k: client $(describe_rc "$rc"), server $(describe_rc "$src")"
		continue
	fi
	echo "ok: checker pair $k beside a killed one: $(grep '^ernic_check: PASS' "$WORK/chk$k.cli")"
done
wait "${cpids[1]}" 2>/dev/null || true
wait "${spids[1]}" 2>/dev/null || true

# 3. 200 openers, 10 at a time
before=$("$ERNICCTL" show "$A" | awk '$1 == "reaped" { print $2 }')
bad=0
for ((r = 0; r < 20; r++)); do
	pids=()
	for ((k = 0; k < 10; k++)); do
		timeout 60 ibv_devinfo -v -d "$A" >"$WORK/open$k.out" 2>&1 &
		pids+=($!)
	done
	for ((k = 0; k < 10; k++)); do
		if ! wait "${pids[k]}" ||
			! grep -q "hca_id:.*$A" "$WORK/open$k.out"; then
			bad=$((bad + 1))
			show_output "opener $((r * 10 + k))" "$WORK/open$k.out"
		fi
	done
done
show=$("$ERNICCTL" show "$A")
after=$(awk '$1 == "reaped" { print $2 }' <<<"$show")
if [ "$bad" != 0 ]; then
	case_failed "200 openers" "$bad of 200 ibv_devinfo runs failed"
elif ! grep -qx 'processes 0' <<<"$show" || [ "$after" != "$before" ]; then
	case_failed "200 openers" "$A not left clean: $(tr '\n' ';' <<<"$show")"
else
	echo "ok: 200 processes opened and closed $A, 10 at a time; nothing left, nothing reaped"
fi

# 4. rping beside ib_write_bw
eval "$("$ERNICCTL" env)"
[[ "$LD_LIBRARY_PATH" == */lib/rdmacm* ]] ||
	fail "ernicctl env did not put lib/rdmacm in LD_LIBRARY_PATH: $LD_LIBRARY_PATH"
label="rping beside ib_write_bw"
pick_port a
bwport=$PORT
timeout 120 ib_write_bw -d "$A" -x 0 -D 6 -p "$bwport" >"$WORK/mix_bw.srv" 2>&1 &
bwsrv=$!
BG_PIDS+=($!)
wait_listening a "$bwport" "$bwsrv" ||
	{ show_output "ib_write_bw server" "$WORK/mix_bw.srv"; fail "ib_write_bw server did not listen"; }
rports=() rsrv=() rcli=()
for k in 0 1; do
	pick_port a
	rports+=("$PORT")
	timeout 120 rping -s -a "$AIP" -p "$PORT" -S 4096 -C 200 -V \
		>"$WORK/mix_rping$k.srv" 2>&1 &
	rsrv+=($!)
	BG_PIDS+=($!)
done
# A server is ready once the device's state file says it listens.
for ((i = 0; i < 100; i++)); do
	[ "$(field "$A" listens)" = 2 ] && break
	sleep 0.1
done
show=$("$ERNICCTL" show "$A")
echo "ib_write_bw and two rping servers on $A, ernicctl show $A:"
indent <<<"$show"
for p in "${rports[@]}"; do
	grep -q "listens.*tcp:$p\b" <<<"$show" ||
		case_failed "$label" "$A does not show a process listening on tcp:$p"
done
out=$(timeout 20 rping -s -a "$AIP" -p "${rports[0]}" -C 1 2>&1) &&
	case_failed "$label" "a second rping server on port ${rports[0]} started: $out"
if grep -qi "address already in use" <<<"$out"; then
	echo "ok: a second rping server on port ${rports[0]} of $A: $(tr '\n' ' ' <<<"$out")"
else
	case_failed "$label" "a second rping server on port ${rports[0]}: want 'Address already in use', got: $out"
fi
timeout 120 ib_write_bw -d "$B" -x 0 -D 6 -p "$bwport" "$AIP" >"$WORK/mix_bw.cli" 2>&1 &
bwcli=$!
BG_PIDS+=($!)
sleep 1
for k in 0 1; do
	timeout 120 rping -c -a "$AIP" -I "$BIP" -p "${rports[k]}" -S 4096 -C 200 -V -v \
		>"$WORK/mix_rping$k.cli" 2>&1 &
	rcli+=($!)
	BG_PIDS+=($!)
done
for k in 0 1; do
	rc=0 src=0
	wait "${rcli[k]}" || rc=$?
	wait "${rsrv[k]}" || src=$?
	n=$(grep -c '^ping data' "$WORK/mix_rping$k.cli" || true)
	if [ "$rc" != 0 ] || [ "$src" != 0 ] || [ "$n" != 200 ]; then
		show_output "rping server $k" "$WORK/mix_rping$k.srv"
		show_output "rping client $k" "$WORK/mix_rping$k.cli"
		case_failed "$label" "rping pair $k: client $(describe_rc "$rc"), server $(describe_rc "$src"), $n of 200 pings"
		continue
	fi
	echo "ok: rping pair $k on $A/$B beside ib_write_bw: 200 pings of 4096 bytes, validated"
done
rc=0 src=0
wait "$bwcli" || rc=$?
wait "$bwsrv" || src=$?
line=$(awk '$1 == 65536 { print; exit }' "$WORK/mix_bw.cli")
if perftest_ok "$WORK/mix_bw.cli" "$rc" &&
	perftest_ok "$WORK/mix_bw.srv" "$src" "$WORK/mix_bw.cli" &&
	{ [ -n "$line" ] || grep -q "Can't produce a report" "$WORK/mix_bw.cli"; }; then
	echo "ok: ib_write_bw beside two rping pairs: ${line:-done, no report (clock calibration)}"
else
	show_output "ib_write_bw server" "$WORK/mix_bw.srv"
	show_output "ib_write_bw client" "$WORK/mix_bw.cli"
	case_failed "$label" "ib_write_bw: client $(describe_rc "$rc"), server $(describe_rc "$src")"
fi
show=$("$ERNICCTL" show "$A")
if ! grep -qx 'processes 0' <<<"$show" || ! grep -qx 'listens 0' <<<"$show"; then
	case_failed "$label" "$A not left clean: $(tr '\n' ';' <<<"$show")"
fi
finish
