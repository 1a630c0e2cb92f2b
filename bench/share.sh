#!/bin/bash
# SPDX-License-Identifier: MIT
# One device, many processes (docs/multiprocess.md): aggregate
# ib_write_bw bandwidth of 1, 2 and 4 pairs at once on one pair of
# ERNICs, and ib_write_lat 2 B of one pair on devices nobody else uses
# against the same with three more processes on each device (waiting,
# each with a QP). Software devices, or with "vfpga" virtual FPGAs
# shared through their brokers. Numbers, not a verdict. Root. Uses
# build/ (BUILD_DIR=...).
#   usage: bench/share.sh [sw|vfpga]
#   BENCH_SECONDS (per bandwidth run, default 5)  BENCH_LAT_ITERS (5000)
#   BENCH_ROUNDS (default 3): the runs alternate, medians are printed
#   BENCH_LAT_PIN (default 1): the latency pair's server on CPU 0 and
#   client on the last CPU
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_cmds ib_write_bw ib_write_lat ibv_rc_pingpong ss
secs=${BENCH_SECONDS:-5} lat_iters=${BENCH_LAT_ITERS:-5000}
rounds=${BENCH_ROUNDS:-3}

export ERNIC_RUNDIR=$WORK/run
eval "$("$ERNICCTL" env)"
kind=${1:-sw}
define_host b0 share0 127.0.0.2
define_host b1 share1 127.0.0.3
case "$kind" in
sw)
	add_device b0 127.0.0.2
	add_device b1 127.0.0.3
	;;
vfpga)
	for d in "share0 127.0.0.2" "share1 127.0.0.3"; do
		# shellcheck disable=SC2086 # name and address
		set -- $d
		"$ERNICCTL" del "$1" >/dev/null 2>&1 || true
		"$ERNICCTL" add "$1" --sim-uio "$2" || fail "cannot create $1"
		at_exit "$ERNICCTL" del "$1"
	done
	;;
*) fail "usage: bench/share.sh [sw|vfpga]" ;;
esac

# start_pairs N PROG ARGS...: N pairs at once; their client outputs in
# $WORK/pK.cli; waits for all. Sets PAIRS_FAILED. With PIN_SRV / PIN_CLI
# set (CPU lists), servers and clients run there (taskset).
start_pairs() {
	local n=$1 k i spids=() cpids=() ports=() srv=() cli=()
	shift
	[ -z "${PIN_SRV:-}" ] || srv=(taskset -c "$PIN_SRV")
	[ -z "${PIN_CLI:-}" ] || cli=(taskset -c "$PIN_CLI")
	PAIRS_FAILED=0
	for ((k = 0; k < n; k++)); do
		pick_port b0
		ports+=("$PORT")
		timeout 300 "${srv[@]}" "$@" -d share0 -x 0 -p "$PORT" \
			>"$WORK/p$k.srv" 2>&1 &
		spids+=($!)
		BG_PIDS+=($!)
		for ((i = 0; i < 100; i++)); do
			listening b0 "$PORT" && break
			sleep 0.1
		done
	done
	for ((k = 0; k < n; k++)); do
		timeout 300 "${cli[@]}" "$@" -d share1 -x 0 -p "${ports[k]}" \
			127.0.0.2 >"$WORK/p$k.cli" 2>&1 &
		cpids+=($!)
		BG_PIDS+=($!)
	done
	for ((k = 0; k < n; k++)); do
		wait "${cpids[k]}" || PAIRS_FAILED=$((PAIRS_FAILED + 1))
		wait "${spids[k]}" || true
	done
}

# A value's median: sorted, the middle one (the lower of two).
median() {
	tr ' ' '\n' <<<"$*" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 }
		END { if (NR) print v[int((NR + 1) / 2)]; else print "FAILED" }'
}

# bw N: aggregate MB/s of N pairs at once, or nothing if none reported.
bw() {
	local n=$1 k v sum=0 got=0
	echo "running $n ib_write_bw pair(s) for ${secs}s ..." >&2
	start_pairs "$n" ib_write_bw -s 65536 -D "$secs" -F
	for ((k = 0; k < n; k++)); do
		v=$(awk '$1 == 65536 { print $4; exit }' "$WORK/p$k.cli")
		[ -n "$v" ] || continue
		got=$((got + 1))
		sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }')
	done
	[ "$got" = "$n" ] && [ "$PAIRS_FAILED" = 0 ] && echo "$sum"
	[ "$got" = "$n" ] || echo "  $n pairs: $got of $n reported, $PAIRS_FAILED failed" >&2
}

# One ib_write_lat pair's typical latency. Unpinned, one run lands in
# one of two modes (about 20 and 35 us on 2 CPUs, by where the kernel
# puts the four busy threads) whatever the sharing: the server and its
# engine on the first CPU, the client on the last, as the same place
# for every run (BENCH_LAT_PIN=0: the kernel's choice).
lat() {
	if [ "${BENCH_LAT_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
		PIN_SRV=0 PIN_CLI=$(($(nproc) - 1)) \
			start_pairs 1 ib_write_lat -s 2 -n "$lat_iters" -F
	else
		start_pairs 1 ib_write_lat -s 2 -n "$lat_iters" -F
	fi
	awk '$1 == 2 { print $6; exit }' "$WORK/p0.cli"
}

# Three more processes on each device, each holding a QP and waiting
# (ibv_rc_pingpong servers waiting for a client): the devices are shared
# and steered, the CPUs stay free for the latency pair.
idle_start() {
	local d k i
	idle=()
	for d in share0 share1; do
		for ((k = 0; k < 3; k++)); do
			pick_port b0
			ibv_rc_pingpong -d "$d" -g 0 -p "$PORT" >/dev/null 2>&1 &
			idle+=($!)
			BG_PIDS+=($!)
		done
	done
	for ((i = 0; i < 50; i++)); do
		[ "$("$ERNICCTL" show share0 | awk '$1 == "processes" { print $2 }')" = 3 ] &&
			[ "$("$ERNICCTL" show share1 | awk '$1 == "processes" { print $2 }')" = 3 ] &&
			break
		sleep 0.1
	done
}

# Rounds alternate the configurations, so that the machine's drift
# (other load, frequency) falls on all of them alike.
b1=() b2=() b4=() la=() ls=()
for ((r = 1; r <= rounds; r++)); do
	echo "round $r of $rounds" >&2
	b1+=("$(bw 1)")
	b2+=("$(bw 2)")
	b4+=("$(bw 4)")
	la+=("$(lat)")
	idle_start
	ls+=("$(lat)")
	kill "${idle[@]}" 2>/dev/null || true
	wait "${idle[@]}" 2>/dev/null || true
done
m1=$(median "${b1[*]}") m2=$(median "${b2[*]}") m4=$(median "${b4[*]}")
mla=$(median "${la[*]}") mls=$(median "${ls[*]}")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 && b + 0) printf "%.2f", a / b; else print "-" }'; }

echo
echo "bench/share.sh $kind on $(uname -r), $(nproc) CPUs, $rounds round(s), medians (each round):"
printf '  ib_write_bw 64 KiB  1 pair     %8s MB/s in all  (%s)\n' "$m1" "${b1[*]}"
printf '  ib_write_bw 64 KiB  2 pairs    %8s MB/s in all  (%s)  x%s of 1 pair\n' "$m2" "${b2[*]}" "$(ratio "$m2" "$m1")"
printf '  ib_write_bw 64 KiB  4 pairs    %8s MB/s in all  (%s)  x%s of 1 pair\n' "$m4" "${b4[*]}" "$(ratio "$m4" "$m1")"
printf '  ib_write_lat 2 B    alone on the devices           t_typical %8s us  (%s)\n' "$mla" "${la[*]}"
printf '  ib_write_lat 2 B    beside 3 processes per device  t_typical %8s us  (%s)  x%s\n' "$mls" "${ls[*]}" "$(ratio "$mls" "$mla")"
