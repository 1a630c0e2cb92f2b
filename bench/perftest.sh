#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark two software ERNICs with Debian's unmodified perftest beside
# what the host's UDP stack does alone between the same two addresses
# (ernic-udp-base, bench/udp_base.c), one table at the end:
#  - raw UDP first, before the devices exist, so that nothing else runs:
#    stream (one 4112-byte datagram per sendto: a PMTU-4096 packet's UDP
#    payload), gso (15 of them per sendto, UDP_GRO receiver), rate (one
#    36-byte datagram per sendto) and pingpong (36 bytes, busy-polled);
#  - then ib_write_bw, ib_send_bw, ib_read_bw at 64 KiB, ib_send_bw at
#    2 B (message rate), ib_write_lat, ib_send_lat, ib_read_lat at 2 B,
#    each row with its ratio to its raw-UDP baseline.
# Numbers, not a verdict: nothing is compared with a threshold (a program
# that fails to run is still an error, exit 1). Root (device nodes).
# Uses build/ (BUILD_DIR=...), building it if need be.
#   BENCH_WIRE=udp|frame (default udp)  BENCH_BW_ITERS (default 5000)
#   BENCH_RATE_ITERS (ib_send_bw -s 2, default 20000)
#   BENCH_LAT_ITERS (default 2000)  BENCH_QPS (ib_write_bw -q row: QPs,
#   default 62, every RC QP of a default device; 0 leaves the row out)
#   BENCH_QPS_ITERS (per QP, default 500)  BENCH_QPS_MAX (ib_write_bw -q row
#   on devices made again with C_NUM_QP=255, PG332's most: default 254, every
#   RC QP; 0 leaves it out)  BENCH_MTU (default: the port's; the
#   stream and gso datagrams are BENCH_MTU + 16 bytes, 4112 without it)
#   BENCH_UDP_SECONDS (per raw-UDP stream, default 3)
#   BENCH_UDP_ITERS (pingpong round trips, default 20000)
#   BENCH_FASTPATH=0 leaves out the callgrind counts (bench/fastpath.sh)
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" ernic-udp-base # run_pair: server, client, timeouts
need_cmds ib_write_bw ib_send_bw ib_read_bw ib_write_lat ib_send_lat ib_read_lat ss
UDP_BASE=$(readlink -f "$build/bin/ernic-udp-base")
wire=${BENCH_WIRE:-udp} bw_iters=${BENCH_BW_ITERS:-5000}
rate_iters=${BENCH_RATE_ITERS:-20000} lat_iters=${BENCH_LAT_ITERS:-2000}
qps=${BENCH_QPS:-62} qps_iters=${BENCH_QPS_ITERS:-500}
qps_max=${BENCH_QPS_MAX:-254}
udp_secs=${BENCH_UDP_SECONDS:-3} udp_iters=${BENCH_UDP_ITERS:-20000}
mtu=()
[ -z "${BENCH_MTU:-}" ] || mtu=(-m "$BENCH_MTU")
# A full packet's UDP payload: BTH (12) + PMTU + ICRC (4).
udp_size=$((${BENCH_MTU:-4096} + 16))
srv_ip=127.0.0.2 cli_ip=127.0.0.3
errors=0

# ---- raw UDP baselines ----

# kv LINE KEY: the value of KEY=VALUE in ernic-udp-base's line.
kv() {
	awk -v k="$2" '{ for (i = 1; i <= NF; i++)
		if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' <<<"$1"
}

# udp MODE ARGS...: one ernic-udp-base run; its "udp_base MODE ..." line
# in UDP[MODE], empty when it failed.
declare -A UDP
udp() {
	local mode=$1 out
	shift
	echo "running ernic-udp-base $mode $* ..." >&2
	if ! out=$(timeout 300 "$UDP_BASE" --server "$srv_ip" --client "$cli_ip" "$mode" "$@"); then
		echo "FAIL: ernic-udp-base $mode" >&2
		errors=$((errors + 1))
	fi
	grep -v '^udp_base ' <<<"$out" | sed 's/^/  /' >&2 || true
	UDP[$mode]=$(grep "^udp_base $mode " <<<"$out" || true)
}

udp stream --size "$udp_size" --seconds "$udp_secs"
udp gso --size "$udp_size" --seconds "$udp_secs"
udp rate --size 36 --seconds "$udp_secs"
udp pingpong --size 36 --iters "$udp_iters"
base_stream=$(kv "${UDP[stream]}" MBps) base_gso=$(kv "${UDP[gso]}" MBps)
base_rate=$(kv "${UDP[rate]}" Mpps) base_pp=$(kv "${UDP[pingpong]}" t_typical)

# base_row MODE WHAT: the baseline's line in the table.
base_row() {
	local l=${UDP[$1]}
	if [ -z "$l" ]; then
		printf '  %-9s %-36s FAILED (see above)\n' "$1" "$2"
	elif [ "$1" = pingpong ]; then
		printf '  %-9s %-36s half RTT t_typical %s us, t_avg %s us, t_99%% %s us\n' \
			"$1" "$2" "$(kv "$l" t_typical)" "$(kv "$l" t_avg)" "$(kv "$l" t_99)"
	else
		printf '  %-9s %-36s %10s MB/s %9.3f Mdgram/s  %s%% lost\n' "$1" "$2" \
			"$(kv "$l" MBps)" "$(kv "$l" Mpps)" "$(kv "$l" lost_pct)"
	fi
}

# ---- perftest on two software ERNICs ----

# A private overlay: the benchmark's devices disturb no other.
export ERNIC_RUNDIR=$WORK/run
eval "$("$ERNICCTL" env)"
define_host b0 bench0 "$srv_ip"
define_host b1 bench1 "$cli_ip"
add_device b0 "$srv_ip" --wire "$wire"
add_device b1 "$cli_ip" --wire "$wire"

rows=()
# bench PROG SIZE ITERS BASE [ARG...]: one run; appends a table row with
# the ratio to its raw-UDP baseline: BASE bw (MB/s against stream and
# gso), rate (Mmsg/s against rate), lat (t_typical against pingpong).
# ARGs go to perftest and into the row's name (-q N: iters is per QP).
bench() {
	local prog=$1 size=$2 iters=$3 base=$4 row name
	shift 4
	name="$prog${*:+ $*}"
	local args=(-x 0 -F -s "$size" -n "$iters" "${mtu[@]}" "$@" -p @PORT@)
	echo "running $prog -s $size -n $iters ..." >&2
	if ! run_pair "bench $prog $size" b0 b1 -- "$prog" -d bench0 "${args[@]}" \
		-- "$prog" -d bench1 "${args[@]}" @SERVER@; then
		rows+=("$(printf '%-17s %8s %7s  %s' "$name" "$size" "$iters" "FAILED (see above)")")
		errors=$((errors + 1))
		return 0
	fi
	local m
	m=$(grep -Eo 'Mtu +: [0-9]+' "$PAIR_CLIENT_OUT" | grep -Eo '[0-9]+$' | head -n1)
	row=$(awk -v prog="$name" -v mtu="$m" -v base="$base" -v stream="$base_stream" \
		-v gso="$base_gso" -v rate="$base_rate" -v pp="$base_pp" '
		# x(A, B, NAME): "A/B x NAME", or "-" without both figures.
		function x(a, b, name) {
			return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f x %s", a / b, name) : "- x " name
		}
		/^ #bytes/ { getline
			if (prog ~ /_bw( |$)/)
				printf "%-17s %8s %7s %6s %12.2f %9.2f %10.6f %26s  %s\n", prog, $1, $2, mtu, $4, $4 * 8 * 1.048576 / 1000, $5, "",
					base == "rate" ? x($5, rate, "rate") : x($4, stream, "stream") ", " x($4, gso, "gso")
			else
				printf "%-17s %8s %7s %6s %12s %9s %10s %8.2f %8.2f %8.2f  %s\n", prog, $1, $2, mtu, "", "", "", $5, $6, $8,
					x($5, pp, "pingpong")
			exit }' "$PAIR_CLIENT_OUT")
	rows+=("${row:-$(printf '%-17s %8s %7s  %s' "$name" "$size" "$iters" "no result line")}")
}

bench ib_write_bw 65536 "$bw_iters" bw
bench ib_send_bw 65536 "$bw_iters" bw
bench ib_read_bw 65536 "$bw_iters" bw
[ "$qps" = 0 ] || bench ib_write_bw 65536 "$qps_iters" bw -q "$qps"
bench ib_send_bw 2 "$rate_iters" rate
bench ib_write_lat 2 "$lat_iters" lat
bench ib_send_lat 2 "$lat_iters" lat
bench ib_read_lat 2 "$lat_iters" lat
# The largest device PG332 allows: the same two, made again with 255 QPs.
if [ "$qps_max" != 0 ]; then
	add_device b0 "$srv_ip" --wire "$wire" --param C_NUM_QP=255
	add_device b1 "$cli_ip" --wire "$wire" --param C_NUM_QP=255
	bench ib_write_bw 65536 "$qps_iters" bw -q "$qps_max"
	rows[-1]+="  (C_NUM_QP=255)"
fi

# ---- fast path instruction counts (callgrind) ----
# bench/fastpath.sh on these devices, under the table (a few minutes;
# BENCH_FASTPATH=0 leaves it out). Its failure counts in $errors.
fastpath_counts() {
	[ "${BENCH_FASTPATH:-1}" != 0 ] || return 0
	if ! command -v valgrind >/dev/null; then
		echo "fast path counts left out: valgrind is not installed"
		return 0
	fi
	FASTPATH_DEVS="bench0 bench1" bash bench/fastpath.sh ||
		errors=$((errors + 1))
}

echo
echo "raw UDP $cli_ip -> $srv_ip, before the devices existed (ernic-udp-base; ${udp_secs} s per stream, received figures):"
base_row stream "$udp_size B, one sendto each"
base_row gso "15 x $udp_size B per sendto, UDP_GRO"
base_row rate "36 B, one sendto each"
base_row pingpong "36 B, busy-poll, $udp_iters round trips"
echo
echo "software ERNICs bench0 ($srv_ip) <- bench1 ($cli_ip), wire $wire, $(nproc) CPUs"
printf '%-17s %8s %7s %6s %12s %9s %10s %8s %8s %8s  %s\n' test bytes iters mtu \
	'BW avg MB/s' 'Gbit/s' 'Mmsg/s' 't_typ us' 't_avg us' 't_99% us' 'against raw UDP'
printf '%s\n' "${rows[@]}"
cat <<'EOT'
Ratios are perftest's figure over its raw-UDP baseline's. Bandwidth and
message rate (x stream, x gso: BW avg MB/s over their received MB/s;
x rate: Mmsg/s over rate's received Mdgram/s): above 1 is faster than
bare UDP. Latency (x pingpong: t_typical over pingpong's half round
trip): how many times slower than bare UDP, 1 the best. ib_read_lat's
t_typical is a whole round trip (perftest halves only SEND and WRITE
latencies): against a UDP round trip it is half its printed ratio.
EOT
fastpath_counts
[ "$errors" = 0 ] || exit 1
exit 0
