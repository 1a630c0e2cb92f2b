#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark two software ERNICs with Debian's unmodified perftest:
# ib_write_bw, ib_send_bw, ib_read_bw at 64 KiB and ib_write_lat at 2 B,
# one table at the end. Numbers, not a verdict: nothing is compared with
# a threshold (a program that fails to run is still an error, exit 1).
# Root (device nodes). Uses build/ (BUILD_DIR=...), building it if need be.
#   BENCH_WIRE=udp|frame (default udp)  BENCH_BW_ITERS (default 5000)
#   BENCH_LAT_ITERS (default 2000)  BENCH_MTU (default: the port's)
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" # run_pair: server, client, timeouts
need_cmds ib_write_bw ib_send_bw ib_read_bw ib_write_lat ss
wire=${BENCH_WIRE:-udp} bw_iters=${BENCH_BW_ITERS:-5000}
lat_iters=${BENCH_LAT_ITERS:-2000}
mtu=()
[ -z "${BENCH_MTU:-}" ] || mtu=(-m "$BENCH_MTU")

# A private overlay: the benchmark's devices disturb no other.
export ERNIC_RUNDIR=$WORK/run
eval "$("$ERNICCTL" env)"
define_host b0 bench0 127.0.0.2
define_host b1 bench1 127.0.0.3
add_device b0 127.0.0.2 --wire "$wire"
add_device b1 127.0.0.3 --wire "$wire"

rows=() errors=0
# bench PROG SIZE ITERS: one run; appends a table row.
bench() {
	local prog=$1 size=$2 iters=$3 row
	local args=(-x 0 -F -s "$size" -n "$iters" "${mtu[@]}" -p @PORT@)
	echo "running $prog -s $size -n $iters ..." >&2
	if ! run_pair "bench $prog" b0 b1 -- "$prog" -d bench0 "${args[@]}" \
		-- "$prog" -d bench1 "${args[@]}" @SERVER@; then
		rows+=("$(printf '%-13s %8s %7s  %s' "$prog" "$size" "$iters" "FAILED (see above)")")
		errors=$((errors + 1))
		return 0
	fi
	local m
	m=$(grep -Eo 'Mtu +: [0-9]+' "$PAIR_CLIENT_OUT" | grep -Eo '[0-9]+$' | head -n1)
	row=$(awk -v prog="$prog" -v mtu="$m" '
		/^ #bytes/ { getline
			if (prog ~ /_bw$/)
				printf "%-13s %8s %7s %6s %12.2f %9.2f %10.4f\n", prog, $1, $2, mtu, $4, $4 * 8 * 1.048576 / 1000, $5
			else
				printf "%-13s %8s %7s %6s %12s %9s %10s %8.2f %8.2f %8.2f\n", prog, $1, $2, mtu, "", "", "", $5, $6, $8
			exit }' "$PAIR_CLIENT_OUT")
	rows+=("${row:-$(printf '%-13s %8s %7s  %s' "$prog" "$size" "$iters" "no result line")}")
}

bench ib_write_bw 65536 "$bw_iters"
bench ib_send_bw 65536 "$bw_iters"
bench ib_read_bw 65536 "$bw_iters"
bench ib_write_lat 2 "$lat_iters"

echo
echo "software ERNICs bench0 (127.0.0.2) <- bench1 (127.0.0.3), wire $wire, $(nproc) CPUs"
printf '%-13s %8s %7s %6s %12s %9s %10s %8s %8s %8s\n' test bytes iters mtu \
	'BW avg MB/s' 'Gbit/s' 'Mmsg/s' 't_typ us' 't_avg us' 't_99% us'
printf '%s\n' "${rows[@]}"
[ "$errors" = 0 ] || exit 1
exit 0
