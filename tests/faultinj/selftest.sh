#!/bin/bash
# SPDX-License-Identifier: MIT
# faultq_selftest: ernic_faultq against numbered RoCE-shaped datagrams
# in a private network namespace. faultq_check sends them from one
# socket to the loopback address, port 4791, through the injector
# (faultq.sh's table and rule), receives what arrives and checks it
# against the injector's per-packet log and counters: each fault alone,
# then all together over IPv4 and IPv6. Seeds are fixed and the
# injector runs on one CPU, so every outcome is the same run after run;
# the rate bounds (5 sigma) only catch a broken PRNG or option parsing.
# usage: selftest.sh ERNIC_FAULTQ FAULTQ_CHECK
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: faultq_selftest needs root (nftables, NFQUEUE, a network namespace)"
	exit 77
fi
if [ -z "${FAULTQ_SELFTEST_NETNS:-}" ]; then
	FAULTQ_SELFTEST_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
here=$(dirname "$0")
# shellcheck source=SCRIPTDIR/../apps/lib.sh
source "$here/../apps/lib.sh"
# shellcheck source=SCRIPTDIR/faultq.sh
source "$here/faultq.sh"
ERNIC_FAULTQ=$1 CHECK=$2
N=${FAULTQ_SELFTEST_COUNT:-4000}
need_cmds nft ip
ip link set lo up
# One CPU for the injector: on lo its verdicts then reach the socket in
# the order given (one backlog), so "out of order" is exact.
CPU=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)

echo "==== bad options: exit 2 with a message"
for args in "--drop 5" "--queue 1 --drop 101" "--queue 1 --dup 1e" \
	"--queue x" "--queue 1 --delay 5" "--queue 1 --reorder-depth 0" \
	"--queue 1 --seed -3" "--queue 1 --nonsense" "--queue 1 extra"; do
	rc=0
	# shellcheck disable=SC2086
	msg=$("$ERNIC_FAULTQ" $args 2>&1 >/dev/null) || rc=$?
	if [ "$rc" != 2 ] || [ -z "$msg" ]; then
		fail "ernic_faultq $args: exit $rc, message '$msg'"
	fi
	echo "  $args: ${msg%%$'\n'*}"
done

# fault_case LABEL FAMILY SEED [options for both the injector and the
# checker...]: one run of N datagrams, then the checks.
fault_case() {
	local label=$1 fam=$2 seed=$3 match hold=0 a
	shift 3
	# Held packets leave within the largest --*-ms (no number is
	# larger); the receiver waits 1 s more, for a loaded machine.
	for a in "$@"; do
		if [[ "$a" =~ ^[0-9]+$ ]] && [ "$a" -gt "$hold" ]; then
			hold=$a
		fi
	done
	if [ "$fam" = 4 ]; then
		match='ip saddr 127.0.0.1 ip daddr 127.0.0.1'
	else
		match='ip6 saddr ::1 ip6 daddr ::1'
	fi
	echo "==== $label (IPv$fam, seed $seed): $*"
	FAULTQ_LOG=$WORK/$label.log FAULTQ_STATS=$WORK/$label.stats
	faultq_start "$match" --seed "$seed" --cpu "$CPU" "$@"
	"$CHECK" run --family "$fam" --count "$N" --gap-us 50 \
		--quiet-ms "$((hold + 1000))" >"$WORK/$label.rec" ||
		fail "$label: faultq_check run failed"
	# while it runs: SIGUSR1 makes the stats file current
	a=$(faultq_stats seen)
	[ "$a" = "$N" ] || fail "$label: faultq_stats seen says $a, not $N"
	faultq_stop
	if ! "$CHECK" verify "$WORK/$label.rec" "$WORK/$label.log" \
		"$WORK/$label.stats" --count "$N" "$@"; then
		FAILURES+=("$label")
		return 0
	fi
	echo "ok: $label"
}

fault_case none 4 1
fault_case drop 4 2 --drop 10
fault_case dup 4 3 --dup 10
fault_case reorder 4 4 --reorder 10 --reorder-depth 3 --reorder-ms 20
fault_case delay 4 5 --delay 10 --delay-ms 30
fault_case corrupt 4 6 --corrupt 10
# The control: a corrupted datagram with its stale UDP checksum must
# never reach the socket, and each must count as a checksum error; so
# every flipped datagram that arrives elsewhere had a valid checksum.
fault_case corrupt-stale-csum 4 7 --corrupt 10 --corrupt-keep-csum
fault_case all 4 8 --drop 5 --dup 5 --reorder 5 --delay 2 --delay-ms 20 \
	--corrupt 1.5
fault_case all-ipv6 6 9 --drop 5 --dup 5 --reorder 5 --delay 2 \
	--delay-ms 20 --corrupt 1.5
fault_case corrupt-ipv6 6 10 --corrupt 10

echo "==== no bypass: with the injector killed, nothing passes"
FAULTQ_LOG='' FAULTQ_STATS=''
faultq_start 'ip saddr 127.0.0.1 ip daddr 127.0.0.1'
kill -KILL "$FAULTQ_PID"
wait "$FAULTQ_PID" 2>/dev/null || true
FAULTQ_PID=
"$CHECK" run --family 4 --count 100 --quiet-ms 300 >"$WORK/dead.rec"
a=$(grep -c '^rx ' "$WORK/dead.rec" || true)
[ "$a" = 0 ] || fail "$a of 100 datagrams passed a queue without a listener"
nft delete table inet ernic_faultq
echo "ok: 0 of 100 datagrams passed"
finish
