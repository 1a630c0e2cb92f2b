#!/bin/bash
# SPDX-License-Identifier: MIT
# One frame-wire software device, many processes (docs/multiprocess.md,
# "Frame mode"): two network namespaces joined by a veth pair, a
# frame-wire ERNIC in each. Every process's AF_PACKET socket sees every
# frame; each must take only its own.
#   1. two ib_write_bw pairs at once: both complete, and `ernicctl show`
#      lists two processes per device, each with its own QP;
#   2. an rping pair (our librdmacm, -V) beside an ib_write_bw pair on
#      the same two devices: the CM MADs and the data of each reach only
#      their own process.
#   environment: ERNICCTL, RDMAV_DRIVERS
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "network namespaces, mknod, eBPF"
need_cmds ip ib_write_bw rping ss timeout
: "${ERNICCTL:?}" "${RDMAV_DRIVERS:?}"

A=ernic-shf-a B=ernic-shf-b
make_netns "$A" "$B"
veth_pair "$A" ershfa 198.51.100.33/24 "$B" ershfb 198.51.100.34/24
netns_host a ershfa0 198.51.100.33 "$A"
netns_host b ershfb0 198.51.100.34 "$B"
# our librdmacm and completion channels, as `ernicctl env` gives them
words=$(bash -c 'eval "$("$0" env)" &&
	printf "LD_PRELOAD=%s LD_LIBRARY_PATH=%s" "$LD_PRELOAD" "$LD_LIBRARY_PATH"' "$ERNICCTL")
[[ "$words" == *"LD_LIBRARY_PATH="*/lib/rdmacm* ]] ||
	fail "ernicctl env gave no lib/rdmacm in LD_LIBRARY_PATH: $words"
HOST_ENV[a]+=" $words"
HOST_ENV[b]+=" $words"

show() { # HOST
	on_host "$1" "$ERNICCTL" show "${HOST_DEV[$1]}"
}

# bw_server PORT OUT / bw_client PORT OUT: ib_write_bw in B / in A.
bw_server() {
	on_host b timeout 120 ib_write_bw -d ershfb0 -x 0 -D 4 -p "$1" >"$2" 2>&1 &
	BG_PIDS+=($!)
	LAST_PID=$!
	wait_listening b "$1" "$LAST_PID" ||
		{ show_output "ib_write_bw server" "$2"; fail "ib_write_bw server on port $1 did not listen"; }
}
bw_client() {
	on_host a timeout 120 ib_write_bw -d ershfa0 -x 0 -D 4 -p "$1" 198.51.100.34 >"$2" 2>&1 &
	BG_PIDS+=($!)
	LAST_PID=$!
}
# bw_done LABEL CLIENT_PID SERVER_PID OUT: the pair completed with a report.
bw_done() {
	local rc=0 src=0 line
	wait "$2" || rc=$?
	wait "$3" || src=$?
	line=$(awk '$1 == 65536 { print; exit }' "$4")
	if [ "$rc" != 0 ] || [ "$src" != 0 ] || [ -z "$line" ]; then
		show_output "$1" "$4"
		case_failed "$1" "client $(describe_rc "$rc"), server $(describe_rc "$src")"
		return
	fi
	echo "ok: $1: $line"
}

# 1. two ib_write_bw pairs
pick_port b
p0=$PORT
bw_server "$p0" "$WORK/bw0.srv"
s0=$LAST_PID
pick_port b
p1=$PORT
bw_server "$p1" "$WORK/bw1.srv"
s1=$LAST_PID
bw_client "$p0" "$WORK/bw0.cli"
c0=$LAST_PID
bw_client "$p1" "$WORK/bw1.cli"
c1=$LAST_PID
for ((i = 0; i < 50; i++)); do
	[ "$(show b | awk '$1 == "qps" { print $2 }')" = 2 ] && break
	sleep 0.1
done
out=$(show b)
echo "two ib_write_bw pairs, ernicctl show ershfb0:"
printf '    %s\n' "${out//$'\n'/$'\n'    }"
if ! grep -qx 'processes 2' <<<"$out" || ! grep -qx 'qps 2' <<<"$out"; then
	case_failed "two ib_write_bw" "ershfb0 does not show 2 processes with a QP each"
fi
bw_done "ib_write_bw pair 0, frame wire" "$c0" "$s0" "$WORK/bw0.cli"
bw_done "ib_write_bw pair 1, frame wire" "$c1" "$s1" "$WORK/bw1.cli"

# 2. rping beside ib_write_bw
pick_port b
p0=$PORT
bw_server "$p0" "$WORK/mix.srv"
s0=$LAST_PID
pick_port b
rport=$PORT
on_host b timeout 120 rping -s -a 198.51.100.34 -p "$rport" -S 4096 -C 200 -V \
	>"$WORK/rping.srv" 2>&1 &
rs=$!
BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do
	[ "$(show b | awk '$1 == "listens" { print $2 }')" = 1 ] && break
	sleep 0.1
done
bw_client "$p0" "$WORK/mix.cli"
c0=$LAST_PID
on_host a timeout 120 rping -c -a 198.51.100.34 -I 198.51.100.33 -p "$rport" -S 4096 \
	-C 200 -V -v >"$WORK/rping.cli" 2>&1 &
rc_pid=$!
BG_PIDS+=($!)
rc=0 src=0
wait "$rc_pid" || rc=$?
wait "$rs" || src=$?
n=$(grep -c '^ping data' "$WORK/rping.cli" || true)
if [ "$rc" != 0 ] || [ "$src" != 0 ] || [ "$n" != 200 ]; then
	show_output "rping server" "$WORK/rping.srv"
	show_output "rping client" "$WORK/rping.cli"
	case_failed "rping beside ib_write_bw" "client $(describe_rc "$rc"), server $(describe_rc "$src"), $n of 200 pings"
else
	echo "ok: rping beside ib_write_bw, frame wire: 200 pings of 4096 bytes, validated"
fi
bw_done "ib_write_bw beside rping, frame wire" "$c0" "$s0" "$WORK/mix.cli"
out=$(show b)
if ! grep -qx 'processes 0' <<<"$out" || ! grep -qx 'listens 0' <<<"$out"; then
	case_failed "frame wire, left clean" "ershfb0: $(tr '\n' ';' <<<"$out")"
fi
finish
