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
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_cmds ib_write_bw ib_write_lat ibv_rc_pingpong ss
secs=${BENCH_SECONDS:-5} lat_iters=${BENCH_LAT_ITERS:-5000}

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
# $WORK/pK.cli; waits for all. Sets PAIRS_FAILED.
start_pairs() {
	local n=$1 k i spids=() cpids=() ports=()
	shift
	PAIRS_FAILED=0
	for ((k = 0; k < n; k++)); do
		pick_port b0
		ports+=("$PORT")
		timeout 300 "$@" -d share0 -x 0 -p "$PORT" >"$WORK/p$k.srv" 2>&1 &
		spids+=($!)
		BG_PIDS+=($!)
		for ((i = 0; i < 100; i++)); do
			listening b0 "$PORT" && break
			sleep 0.1
		done
	done
	for ((k = 0; k < n; k++)); do
		timeout 300 "$@" -d share1 -x 0 -p "${ports[k]}" 127.0.0.2 \
			>"$WORK/p$k.cli" 2>&1 &
		cpids+=($!)
		BG_PIDS+=($!)
	done
	for ((k = 0; k < n; k++)); do
		wait "${cpids[k]}" || PAIRS_FAILED=$((PAIRS_FAILED + 1))
		wait "${spids[k]}" || true
	done
}

rows=()
for n in 1 2 4; do
	echo "running $n ib_write_bw pair(s) for ${secs}s ..." >&2
	start_pairs "$n" ib_write_bw -s 65536 -D "$secs" -F
	sum=0 got=0
	for ((k = 0; k < n; k++)); do
		v=$(awk '$1 == 65536 { print $4; exit }' "$WORK/p$k.cli")
		[ -n "$v" ] || continue
		got=$((got + 1))
		sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }')
	done
	rows+=("$(printf 'ib_write_bw 64 KiB  %d pair(s)  %10.2f MB/s in all  (%d of %d reported, %d failed)' \
		"$n" "$sum" "$got" "$n" "$PAIRS_FAILED")")
done

lat() { # LABEL: one ib_write_lat pair; its typical latency
	start_pairs 1 ib_write_lat -s 2 -n "$lat_iters" -F
	v=$(awk '$1 == 2 { print $6; exit }' "$WORK/p0.cli")
	rows+=("$(printf 'ib_write_lat 2 B    %-30s t_typical %s us' "$1" "${v:-FAILED}")")
}
lat "alone on the devices"
# Three more processes on each device, each holding a QP and waiting
# (ibv_rc_pingpong servers waiting for a client): the devices are shared
# and steered, the CPUs stay free for the latency pair.
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
lat "beside 3 processes per device"
kill "${idle[@]}" 2>/dev/null || true

echo
echo "bench/share.sh $kind on $(uname -r), $(nproc) CPUs:"
printf '  %s\n' "${rows[@]}"
