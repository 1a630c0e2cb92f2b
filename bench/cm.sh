#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark connection setup through our librdmacm (the IB CM on QP1)
# between two ERNICs, on software ERNICs in the programs' processes (sw)
# and on virtual FPGAs driven through the UIO backend (sim-uio):
#  - Debian's unmodified cmtime (rdmacm-utils): a server and a client,
#    each a process with an overlay (ERNIC_RUNDIR) and a device of its
#    own, BENCH_CONNS connections at once; its per-step totals;
#  - rdmacm_cycles --bench (tests/rdmacm_cycles.c): one connection at a
#    time in one process holding both devices; the median and 99th
#    percentile of connect (rdma_connect to ESTABLISHED) and of time to
#    first byte (rdma_connect to the server's completion of the client's
#    first SEND).
# Numbers, not a verdict: nothing is compared with a threshold (a program
# that fails to run is still an error, exit 1). Root (device nodes).
# Uses build/ (BUILD_DIR=...), building it if need be.
#   BENCH_CONNS (default "100 200"; cmtime makes all its QPs at once: a
#     device has at most C_NUM_QP - 1 = 254, a virtual FPGA's DMA region
#     holds about 248 of cmtime's)
#   BENCH_CYCLES (default 500)  BENCH_KINDS (default "sw sim-uio")
# Devices: ernicz0/ernicz1 on 127.0.0.78/.79 (sw), ernicz2/ernicz3 on
# 127.0.0.86/.87 (sim-uio).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" rdmacm_cycles # stop_pid, at_exit
CYCLES=$(readlink -f "$build/bin/rdmacm_cycles")
need_cmds cmtime
conns=${BENCH_CONNS:-100 200} cycles=${BENCH_CYCLES:-500}
kinds=${BENCH_KINDS:-sw sim-uio}
# cmtime's CQs come with completion channels: a few fds per connection.
ulimit -n "$(ulimit -Hn)"

declare -A SRV_IP=([sw]=127.0.0.78 [sim-uio]=127.0.0.86)
declare -A CLI_IP=([sw]=127.0.0.79 [sim-uio]=127.0.0.87)
declare -A SRV_DEV=([sw]=ernicz0 [sim-uio]=ernicz2)
declare -A CLI_DEV=([sw]=ernicz1 [sim-uio]=ernicz3)

# dev_add RUNDIR NAME KIND IP [ernicctl add options...]: removed at exit
# unless dev_del removes it first.
dev_add() {
	local run=$1 name=$2 kind=$3 ip=$4
	shift 4
	mkdir -p "$run"
	ERNIC_RUNDIR=$run "$ERNICCTL" add "$name" "--$kind" "$ip" "$@" >/dev/null ||
		fail "ernicctl add $name --$kind $ip $*"
	at_exit env "ERNIC_RUNDIR=$run" "$ERNICCTL" del "$name"
}
dev_del() { # RUNDIR NAME
	ERNIC_RUNDIR=$1 "$ERNICCTL" del "$2" >/dev/null 2>&1 || true
}
# env_of RUNDIR: what eval "$(ernicctl env)" gives a program there, as
# VAR=VALUE words for env(1) (none has a space).
env_of() {
	ERNIC_RUNDIR=$1 bash -c 'eval "$("$0" env)" &&
		printf "ERNIC_RUNDIR=%s SYSFS_PATH=%s RDMAV_DRIVERS=%s LD_PRELOAD=%s LD_LIBRARY_PATH=%s" \
		"$ERNIC_RUNDIR" "$SYSFS_PATH" "$RDMAV_DRIVERS" "$LD_PRELOAD" "$LD_LIBRARY_PATH"' "$ERNICCTL"
}
# node_of RUNDIR NAME: the device's /dev/infiniband node.
node_of() {
	echo "/dev/infiniband/$(ERNIC_RUNDIR=$1 "$ERNICCTL" list |
		awk -v d="$2" '$1 == d { print $2 }')"
}

cm_rows=() ttfb_rows=() errors=0 port=18830
cm_failed() { # KIND N WHY
	cm_rows+=("$(printf '%-8s %6s  FAILED: %s' "$1" "$2" "$3")")
	errors=$((errors + 1))
}

# cmtime_run KIND N: one cmtime server and client; appends a row. The
# server (Debian's cmtime) serves until it is killed.
cmtime_run() {
	local kind=$1 n=$2 sdir=$WORK/$1-srv cdir=$WORK/$1-cli i spid crc=0 node
	local out=$WORK/cmtime-$1-$2 sip=${SRV_IP[$1]} cip=${CLI_IP[$1]} row why
	local -a senv cenv
	read -ra senv <<<"$(env_of "$sdir")"
	read -ra cenv <<<"$(env_of "$cdir")"
	node=$(node_of "$sdir" "${SRV_DEV[$kind]}")
	port=$((port + 1))
	echo "running cmtime -c $n on $kind ..." >&2
	timeout 600 env "${senv[@]}" cmtime -b "$sip" -p "$port" -c "$n" \
		>"$out.server" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	# Listening once it holds its device (rdma_listen follows at once).
	for ((i = 0; i < 300; i++)); do
		[ -z "$(find /proc/[0-9]*/fd -lname "$node" -print -quit 2>/dev/null)" ] ||
			break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.3
	if ! kill -0 "$spid" 2>/dev/null; then
		show_output "cmtime server" "$out.server"
		cm_failed "$kind" "$n" "the server ended"
		return 0
	fi
	ERNIC_CM_STATS=1 timeout 600 env "${cenv[@]}" cmtime -s "$sip" -b "$cip" \
		-p "$port" -c "$n" >"$out.client" 2>&1 || crc=$?
	stop_pid "$spid"
	why=$(grep -m1 '^event: \|failure\|failed' "$out.client" || true)
	if [ "$crc" != 0 ] || [ -n "$why" ]; then
		show_output "cmtime client (exit $crc)" "$out.client"
		show_output "cmtime server" "$out.server"
		cm_failed "$kind" "$n" "client: ${why:-$(describe_rc "$crc")}"
		return 0
	fi
	# "%-13s: %11.2f%11.2f%11.2f%11.2f": step, total ms, max ms, min us,
	# us/conn. Fixed columns: min is 1e9 (13 wide) for a step without data.
	row=$(awk -v kind="$kind" -v n="$n" '
		/^[a-z ]+: / {
			step = substr($0, 1, 13); sub(/ +$/, "", step)
			tot[step] = substr($0, 16, 11) + 0; max[step] = substr($0, 27, 11) + 0
		}
		/CM: rx/ { for (i = 1; i < NF; i++) {
			if ($i == "retransmits") retx = $(i + 1)
			if ($i == "tx_errors") sqfull = $(i + 1) } }
		END {
			setup = tot["create id"] + tot["bind addr"] + tot["resolve addr"] + \
				tot["resolve route"] + tot["create qp"] + tot["connect"]
			if (!("connect" in tot) || setup <= 0) exit 1
			printf "%-8s %6d %9.1f %8.1f %8.1f %8.1f %9.1f %9.1f %8.1f %9.1f %8.1f %9.1f %8.1f %5s %7s\n",
				kind, n, tot["create id"], tot["bind addr"], tot["resolve addr"],
				tot["resolve route"], tot["create qp"], tot["connect"],
				max["connect"], tot["disconnect"], tot["destroy"], setup,
				n * 1000 / setup, retx, sqfull
		}' "$out.client") || {
		show_output "cmtime client" "$out.client"
		cm_failed "$kind" "$n" "no step table"
		return 0
	}
	cm_rows+=("$row")
}

# cycles_run KIND: rdmacm_cycles --bench in one process, both devices in
# one overlay; appends a row.
cycles_run() {
	local kind=$1 run=$WORK/$1-both out=$WORK/cycles-$1 row
	local -a e
	read -ra e <<<"$(env_of "$run")"
	echo "running rdmacm_cycles --bench $cycles on $kind ..." >&2
	if ! timeout 600 env "${e[@]}" "$CYCLES" --bench "$cycles" -p 18829 \
		"${SRV_IP[$kind]}" "${CLI_IP[$kind]}" >"$out" 2>&1; then
		show_output "rdmacm_cycles --bench" "$out"
		ttfb_rows+=("$(printf '%-8s %6s  FAILED (see above)' "$kind" "$cycles")")
		errors=$((errors + 1))
		return 0
	fi
	row=$(awk -v kind="$kind" '
		/bench: [0-9]+ connections in/ { n = $3; rate = $(NF - 1) }
		/bench: [a-z_]+_us median/ { k = $3; sub(/_us$/, "", k); med[k] = $5; p99[k] = $7 }
		END { printf "%-8s %6d %7.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", kind, n, rate,
			med["setup"], p99["setup"], med["connect"], p99["connect"],
			med["first_byte"], p99["first_byte"] }' "$out")
	ttfb_rows+=("$row")
}

for kind in $kinds; do
	[ -n "${SRV_IP[$kind]:-}" ] || fail "BENCH_KINDS: unknown kind $kind (sw, sim-uio)"
	# cmtime: each side alone in its overlay, room for 254 QPs.
	dev_add "$WORK/$kind-srv" "${SRV_DEV[$kind]}" "$kind" "${SRV_IP[$kind]}" \
		--param C_NUM_QP=255
	dev_add "$WORK/$kind-cli" "${CLI_DEV[$kind]}" "$kind" "${CLI_IP[$kind]}" \
		--param C_NUM_QP=255
	for n in $conns; do
		cmtime_run "$kind" "$n"
	done
	dev_del "$WORK/$kind-srv" "${SRV_DEV[$kind]}"
	dev_del "$WORK/$kind-cli" "${CLI_DEV[$kind]}"
	# rdmacm_cycles: both devices in one overlay, the same addresses.
	dev_add "$WORK/$kind-both" "${SRV_DEV[$kind]}" "$kind" "${SRV_IP[$kind]}"
	dev_add "$WORK/$kind-both" "${CLI_DEV[$kind]}" "$kind" "${CLI_IP[$kind]}"
	cycles_run "$kind"
	dev_del "$WORK/$kind-both" "${SRV_DEV[$kind]}"
	dev_del "$WORK/$kind-both" "${CLI_DEV[$kind]}"
done

echo
echo "cmtime (Debian rdmacm-utils, unmodified) on our librdmacm, $(nproc) CPUs: the client's"
echo "per-step totals in ms for all connections at once; setup = create id .. connect;"
echo "retx = REQs and DREQs the client's CM sent again after 1.2 s without an answer;"
echo "sq_full = MADs its QP1 send queue had no room for (they wait for that retransmission)"
printf '%-8s %6s %9s %8s %8s %8s %9s %9s %8s %9s %8s %9s %8s %5s %7s\n' device conns \
	'create_id' bind 'res_addr' 'res_rte' 'create_qp' connect 'conn_max' \
	disconnect destroy setup 'conn/s' retx 'sq_full'
printf '%s\n' "${cm_rows[@]}"
echo
echo "rdmacm_cycles --bench: one connection at a time, one process with both devices, us"
printf '%-8s %6s %7s %9s %9s %9s %9s %9s %9s\n' device conns 'conn/s' \
	'setup_med' 'setup_p99' 'conn_med' 'conn_p99' 'ttfb_med' 'ttfb_p99'
printf '%s\n' "${ttfb_rows[@]}"
[ "$errors" = 0 ] || exit 1
exit 0
