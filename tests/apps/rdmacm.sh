#!/bin/bash
# SPDX-License-Identifier: MIT
# Unmodified rdma_cm programs (Debian's rdmacm-utils and perftest -R)
# between two software devices, after eval "$(ernicctl env)": librdmacm
# is ours (the IB CM on QP1), every connection is made with REQ/REP/RTU
# and closed with DREQ/DREP. First, without our library, rping must fail
# as Debian's librdmacm makes it fail without a kernel: ours is what
# makes it work.
#
# Each side is a "host" of its own: its own run directory (sysfs
# overlay) holding its one device, as two machines would. A device is
# one process's at a time (until devices are shared), and a listener on
# the wildcard address (perftest's server) opens every device it sees.
#   environment: ERNICCTL (the tests' fixture is not used)
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds rping ucmatose rdma_server rdma_client udaddy mckey ib_write_bw \
	ib_read_bw ib_send_bw ib_send_lat ib_write_lat ib_read_lat ss
: "${ERNICCTL:?}"

# Hosts 0 and 1: software ERNICs in the programs' own processes; hosts 2
# and 3: virtual FPGAs driven through the UIO backend (--sim-uio).
make_host() { # H KIND IP
	local h=$1 kind=$2 ip=$3 dev=ernicr$1 rundir=$WORK/host$1 words
	mkdir -p "$rundir"
	ERNIC_RUNDIR=$rundir "$ERNICCTL" add "$dev" "--$kind" "$ip" >/dev/null ||
		fail "ernicctl add $dev --$kind $ip"
	at_exit env "ERNIC_RUNDIR=$rundir" "$ERNICCTL" del "$dev"
	# What eval "$(ernicctl env)" gives a program on that host.
	words=$(ERNIC_RUNDIR=$rundir bash -c 'eval "$("$0" env)" &&
		printf "SYSFS_PATH=%s RDMAV_DRIVERS=%s LD_PRELOAD=%s LD_LIBRARY_PATH=%s" \
		"$SYSFS_PATH" "$RDMAV_DRIVERS" "$LD_PRELOAD" "$LD_LIBRARY_PATH"' "$ERNICCTL")
	# shellcheck disable=SC2086 # VAR=VALUE words without spaces
	define_host "host$h" "$dev" "$ip" "" "ERNIC_RUNDIR=$rundir" $words
}
make_host 0 sw 127.0.0.72
make_host 1 sw 127.0.0.73
make_host 2 sim-uio 127.0.0.74
make_host 3 sim-uio 127.0.0.75
[[ "${HOST_ENV[host1]}" == *"LD_LIBRARY_PATH="*"/lib/rdmacm"* ]] ||
	fail "ernicctl env did not put lib/rdmacm in LD_LIBRARY_PATH: ${HOST_ENV[host1]}"
so=$(on_host host1 env LD_TRACE_LOADED_OBJECTS=1 rping 2>/dev/null | awk '/librdmacm.so.1/{print $3}')
[[ "$so" == */lib/rdmacm/librdmacm.so.1 ]] ||
	fail "rping does not load the ERNIC librdmacm: '$so'"

# An rdma_cm server is ready once the device's state file says a process
# listens on the port (`ernicctl show`: rdma_listen claims it there). A
# client that came much earlier would be rejected, and perftest's retry
# after a REJ reuses ids it has freed (seen: ib_write_bw -R crashing in
# rdma_resolve_addr). perftest -R's server listens a second time after
# its handshake, where no script can wait: the CM sends a REQ refused for
# "invalid service ID" again for half a second (ernic-rdmacm.7) before
# the REJ is told; without that, about one case in ten crashed here.
# shellcheck disable=SC2317 # called through PAIR_READY
rdmacm_ready() { # HOST PORT
	on_host "$1" "$ERNICCTL" show "${HOST_DEV[$1]}" |
		grep -qE "^process .* listens (.*,)?tcp:$2(,|$)"
}
PAIR_READY=rdmacm_ready
# The pair the cases run on: server SH, client CH.
use_pair() { # SERVER_HOST CLIENT_HOST
	SH=$1 CH=$2 ip0=${HOST_IP[$1]} ip1=${HOST_IP[$2]} d0=${HOST_DEV[$1]} d1=${HOST_DEV[$2]}
	WHERE="${HOST_DEV[$1]}<-${HOST_DEV[$2]}"
}
use_pair host0 host1

# Without our librdmacm: Debian's asks the kernel's rdma_cm.
out=$(on_host host1 env -u LD_LIBRARY_PATH timeout 20 rping -c -a "$ip0" -I "$ip1" \
	-p 18598 -C 1 2>&1) && fail "rping without the ERNIC librdmacm succeeded: $out"
grep -q 'event channel' <<<"$out" || fail "rping without the ERNIC librdmacm: unexpected: $out"
echo "ok: without the ERNIC librdmacm: $(head -1 <<<"$out")"

# rping: -V compares every ping's RDMA READ and WRITE with what was
# sent; -v prints each ping, one line per iteration on each side.
rping_case() { # LABEL SIZE COUNT [EXTRA...]
	local label=$1 size=$2 count=$3 n
	shift 3
	if ! run_pair "rping $label $WHERE" "$SH" "$CH" \
		-- rping -s -a "$ip0" -p @PORT@ -S "$size" -C "$count" -V -v "$@" \
		-- rping -c -a @SERVER@ -I "$ip1" -p @PORT@ -S "$size" -C "$count" -V -v "$@"; then
		case_failed "rping $label" "rping failed"
		return 0
	fi
	n=$(grep -c '^ping data: rdma-ping-' "$PAIR_CLIENT_OUT" || true)
	if [ "$n" != "$count" ] || grep -qi 'mismatch\|error' "$PAIR_CLIENT_OUT" "$PAIR_SERVER_OUT"; then
		show_output client "$PAIR_CLIENT_OUT"
		show_output server "$PAIR_SERVER_OUT"
		case_failed "rping $label" "client printed $n of $count pings, or an error"
		return 0
	fi
	echo "ok: rping $label $WHERE: $count pings of $size bytes, validated"
}

# ucmatose: several connections on one channel, SENDs both ways, then
# disconnect; -m moves the ids to another channel on the way.
ucma_case() { # LABEL CONNS COUNT SIZE [EXTRA...]
	local label=$1 conns=$2 count=$3 size=$4
	shift 4
	if ! run_pair "ucmatose $label $WHERE" "$SH" "$CH" \
		-- ucmatose -b "$ip0" -p @PORT@ -c "$conns" -C "$count" -S "$size" "$@" \
		-- ucmatose -s @SERVER@ -b "$ip1" -p @PORT@ -c "$conns" -C "$count" -S "$size" "$@"; then
		case_failed "ucmatose $label" "ucmatose failed"
		return 0
	fi
	if ! grep -q 'test complete' "$PAIR_CLIENT_OUT" ||
		! grep -q 'return status 0' "$PAIR_CLIENT_OUT" ||
		! grep -q 'return status 0' "$PAIR_SERVER_OUT"; then
		show_output client "$PAIR_CLIENT_OUT"
		show_output server "$PAIR_SERVER_OUT"
		case_failed "ucmatose $label" "no 'test complete' / 'return status 0'"
		return 0
	fi
	echo "ok: ucmatose $label $WHERE: $conns connections x $count messages of $size bytes"
}

# rdma_server / rdma_client: synchronous ids (no channel) and
# rdma_create_ep()/rdma_get_request(); the client names no source.
rdma_server_case() {
	if ! run_pair "rdma_server $WHERE" "$SH" "$CH" \
		-- rdma_server -s "$ip0" -p @PORT@ \
		-- rdma_client -s @SERVER@ -p @PORT@; then
		case_failed "rdma_server $WHERE" "rdma_server / rdma_client failed"
		return 0
	fi
	if grep -q 'rdma_client: end 0' "$PAIR_CLIENT_OUT" &&
		grep -q 'rdma_server: end 0' "$PAIR_SERVER_OUT"; then
		echo "ok: rdma_server / rdma_client $WHERE"
	else
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "rdma_server $WHERE" "no 'end 0'"
	fi
}

# perftest with -R: the connection and the parameter exchange both over
# rdma_cm, the test on the QPs it made.
perftest_r_case() { # PROG N [EXTRA...]
	local prog=$1 n=$2
	shift 2
	if ! run_pair "$prog -R $* $WHERE" "$SH" "$CH" \
		-- "$prog" -R -d "$d0" --source_ip "$ip0" -p @PORT@ -n "$n" "$@" \
		-- "$prog" -R -d "$d1" --source_ip "$ip1" -p @PORT@ -n "$n" "$@" @SERVER@; then
		case_failed "$prog -R $*" "failed"
		return 0
	fi
	if ! grep -Eq '^ +[0-9]+ +[0-9]+ +' "$PAIR_CLIENT_OUT"; then
		show_output client "$PAIR_CLIENT_OUT"
		case_failed "$prog -R $*" "no result line"
		return 0
	fi
	echo "ok: $prog -R $* $WHERE: $(grep -E '^ +[0-9]+ +[0-9]+ +' "$PAIR_CLIENT_OUT" | tail -1 | tr -s ' ')"
}

# Everything on the in-process pair; the main programs on the virtual
# FPGAs, whose QP1 and completion events go through the UIO backend.
use_pair host0 host1
# rping's -S takes 23 to 65535 bytes (its own limits): the smallest, a
# page and the largest, 200 pings each.
rping_case "size=23" 23 200
rping_case "size=4096" 4096 200
rping_case "size=65535" 65535 200
# -q: the program's own QP, taken through its states with
# rdma_init_qp_attr() and connected with rdma_establish().
rping_case "own QP" 1024 20 -q
ucma_case "10 conns" 10 100 1000
ucma_case "migrate" 2 10 100 -m
rdma_server_case
perftest_r_case ib_write_bw 1000 -s 65536
perftest_r_case ib_read_bw 1000 -s 65536
perftest_r_case ib_send_bw 1000 -s 4096
perftest_r_case ib_write_lat 1000 -s 2
perftest_r_case ib_send_lat 1000 -s 2
perftest_r_case ib_read_lat 1000 -s 2
perftest_r_case ib_write_bw 200 -q 8 -s 8192

use_pair host2 host3
rping_case "size=64" 64 100
rping_case "own QP" 1024 20 -q
ucma_case "4 conns" 4 100 1000
# (Not rdma_client: it registers a static array, which the UIO backend
# without an IOMMU cannot register: docs/hardware.md.)
perftest_r_case ib_write_bw 1000 -s 65536
perftest_r_case ib_send_lat 1000 -s 2

use_pair host0 host1

# Refusals: a REQ for a port nobody listens on (while the device is
# up, serving another listener) is rejected with "invalid service ID";
# UD (udaddy) is refused and said so.
host_argv host0
"${HOST_ARGV[@]}" timeout 60 rping -s -a "$ip0" -p 18596 -C 1 >"$WORK/noport.server.out" 2>&1 &
BG_PIDS+=($!)
for _ in $(seq 100); do rdmacm_ready host0 18596 && break; sleep 0.1; done
out=$(on_host host1 timeout 30 rping -c -a "$ip0" -I "$ip1" -p 18597 -C 1 -d 2>&1) &&
	case_failed "rping to no listener" "succeeded: $out"
grep -q 'RDMA_CM_EVENT_REJECTED, error 8' <<<"$out" ||
	case_failed "rping to no listener" "not rejected with reason 8 (invalid service ID): $out"
stop_pid "${BG_PIDS[-1]}"
for prog in "udaddy -s $ip0 -b $ip1" "mckey -m 239.1.1.1 -b $ip1"; do
	# shellcheck disable=SC2086 # the program and its options
	out=$(on_host host1 timeout 30 $prog 2>&1) &&
		case_failed "${prog%% *}" "UD succeeded: $out"
	grep -q 'ERNIC has only RC' <<<"$out" ||
		case_failed "${prog%% *}" "no reason given: $out"
done
echo "ok: refusals"
finish
