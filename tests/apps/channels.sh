#!/bin/bash
# SPDX-License-Identifier: MIT
# Standard completion channels for unmodified programs: after
# eval "$(ernicctl env)", ibv_rc_pingpong -e, ib_send_bw -e and
# ib_send_lat -e, which sleep in ibv_get_cq_event() for every
# completion, between the fixture's software devices (ernict0 =
# 127.0.0.2, ernict1 = 127.0.0.3), then between its virtual FPGAs on the
# UIO path (ernicu0 = 127.0.0.52, ernicu1 = 127.0.0.53), where the
# interrupt handler's W1C clears are posted writes that it flushes. A
# lost or late event hangs the program, which fails the case. First,
# without libernic-preload.so, ibv_rc_pingpong -e must fail as
# libibverbs alone makes it fail: the preload is what makes it work.
#   environment: ERNICCTL, ERNIC_RUNDIR, SYSFS_PATH, RDMAV_DRIVERS
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds ibv_rc_pingpong ib_send_bw ib_send_lat ss
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

define_host udp0 ernict0 127.0.0.2
define_host udp1 ernict1 127.0.0.3
define_host uio0 ernicu0 127.0.0.52
define_host uio1 ernicu1 127.0.0.53
"$ERNICCTL" list | grep -q '^ernicu0 .* uio 127\.0\.0\.52 ' ||
	fail "ernicu0 is not a UIO-path device"

# Without the preload: libibverbs asks the (absent) kernel driver.
out=$(LD_PRELOAD= timeout 20 ibv_rc_pingpong -d ernict0 -g 0 -e -p 18599 2>&1) &&
	fail "ibv_rc_pingpong -e without libernic-preload.so succeeded: $out"
grep -q "Couldn't create completion channel" <<<"$out" ||
	fail "ibv_rc_pingpong -e without the preload: unexpected failure: $out"
echo "ok: without libernic-preload.so: $out"

eval "$("$ERNICCTL" env)"
[[ ":$LD_PRELOAD:" == *"/lib/libernic-preload.so:"* ]] ||
	fail "ernicctl env did not put libernic-preload.so in LD_PRELOAD: '$LD_PRELOAD'"
# Programs that are not verbs programs run as before with it preloaded.
[ "$(printf 'a\nb\n' | sort -r | tr '\n' ' ')" = "b a " ] ||
	fail "sort/tr misbehave with LD_PRELOAD=$LD_PRELOAD"

for pair in "lo-udp-events udp0 udp1" "uio-events uio0 uio1"; do
	read -r label a b <<<"$pair"
	PINGPONG_EXTRA=-e
	for s in 1 4096 65536; do
		pingpong_case "$label" "$a" "$b" "$s" 1024 200
	done
	PINGPONG_EXTRA=
	# (perftest refuses -e for RDMA WRITE: "Events feature not
	# available".)
	perftest_case "$label" "$a" "$b" ib_send_bw 200 -a -e
	# Latency with events polls once per event, after re-arming: an
	# event before a message is whole, or a second one for a message
	# already announced, puts it out of step, and its next post finds
	# the one-deep send queue full (sizes up to 8 MiB, past the RQ).
	perftest_case "$label" "$a" "$b" ib_send_lat 200 -a -e
done
finish
