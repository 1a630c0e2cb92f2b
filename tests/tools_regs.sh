#!/bin/bash
# SPDX-License-Identifier: MIT
# ernicctl dump and stats on the fixture's devices while Debian's
# ib_write_bw runs over them: software ERNICs (one register file per
# process) and virtual FPGAs (the UIO map). The registers read must be
# the ones the running provider programmed (each QP's DESTQPCONF is the
# peer's QP number ib_write_bw prints), the counters must move between two
# reads, and the programs must finish as without the reads.
set -uo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (the fixture's devices)"
	exit 77
fi
: "${ERNICCTL:?}" "${ERNIC_RUNDIR:?}"
command -v ib_write_bw >/dev/null || { echo "SKIP: perftest missing"; exit 77; }
eval "$("$ERNICCTL" env)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# field NAME FIELD FILE: FIELD's value on the first stats line of NAME
field() {
	awk -v n="$1" -v f="$2" '$1 == n { for (i = 3; i < NF; i++)
		if ($i == f) { print $(i + 1); exit } }' "$3"
}

# case SERVER ADDR CLIENT SW: one ib_write_bw run, the reads during it
run_case() {
	local srv=$1 addr=$2 cli=$3 sw=$4 spid cpid qs qc before=$fail
	ib_write_bw -d "$srv" -x 0 -D 4 >"$tmp/s.log" 2>&1 &
	spid=$!
	sleep 1
	ib_write_bw -d "$cli" -x 0 -D 4 "$addr" >"$tmp/c.log" 2>&1 &
	cpid=$!
	sleep 2
	"$ERNICCTL" dump "$cli" >"$tmp/dump" || bad "$cli: dump failed"
	"$ERNICCTL" stats "$cli" >"$tmp/st1" || bad "$cli: stats failed"
	sleep 0.5
	"$ERNICCTL" stats "$cli" >"$tmp/st2" || bad "$cli: stats failed"
	wait "$cpid" || bad "$cli: ib_write_bw failed while being read"
	wait "$spid" || bad "$srv: ib_write_bw failed while being read"
	grep -q "^ 65536 " "$tmp/c.log" || bad "$cli: no bandwidth line"
	# the QP numbers ib_write_bw reports, local and remote
	qc=$(awk '/local address/ { sub(/,/, "", $6); print $6; exit }' "$tmp/c.log")
	qs=$(awk '/remote address/ { sub(/,/, "", $6); print $6; exit }' "$tmp/c.log")
	if [ "$sw" = 1 ]; then
		grep -q "^# process [0-9]* pid $cpid (ib_write_bw)$" "$tmp/dump" ||
			bad "$cli: dump names no block for pid $cpid"
	else
		grep -q "^# process" "$tmp/dump" && bad "$cli: a process block on UIO"
	fi
	# the client's QP: enabled, its destination the server's QP
	local i=$((qc)) conf dest
	conf=$(awk -v r="QPCONF$i" '$2 == r { print $3; exit }' "$tmp/dump")
	dest=$(awk -v r="DESTQPCONF$i" '$2 == r { print $3; exit }' "$tmp/dump")
	[ -n "$conf" ] && (( conf & 1 )) || bad "$cli: QPCONF$i '$conf' not enabled"
	[ -n "$dest" ] && (( (dest & 0xffffff) == qs )) ||
		bad "$cli: DESTQPCONF$i '$dest' is not the server's QP $qs"
	grep -q "^0x20000 XRNICCONF 0x" "$tmp/dump" || bad "$cli: no XRNICCONF"
	[ "$(grep -c '^0x' "$tmp/dump")" -gt 2000 ] || bad "$cli: short dump"
	# counters move; the QP's status line is there
	local a b
	a=$(field INAMPKTCNT in-ack "$tmp/st1")
	b=$(field INAMPKTCNT in-ack "$tmp/st2")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] ||
		bad "$cli: in-ack did not move ($a, $b)"
	grep -q "^qp $i statqp " "$tmp/st2" || bad "$cli: no status of QP $i"
	[ "$fail" = "$before" ] &&
		echo "ok $cli: QPCONF$i $conf DESTQPCONF$i $dest, in-ack $a -> $b," \
		     "$(grep -c '^0x' "$tmp/dump") registers"
}

run_case ernict0 127.0.0.2 ernict1 1
run_case ernicu0 127.0.0.52 ernicu1 0

# Table 2-3 end to end: packets failing one check each, from a real
# socket, counted by syndrome from the error buffer by the provider of
# the process that has the device open (ernic-syn-send, tests/syn_send.c)
syn() { awk -v b="$1" '$1 == "syndrome" && $2 == b { print $3 }' "$2"; }
if [ -n "${ERNIC_SYN_SEND:-}" ]; then
	ib_write_bw -d ernict0 -x 0 >"$tmp/s.log" 2>&1 &
	spid=$!
	sleep 1
	"$ERNICCTL" stats ernict0 >"$tmp/y1"
	for k in icrc version qp; do
		"$ERNIC_SYN_SEND" 127.0.0.9 127.0.0.2 "$k" 5 || bad "syn_send $k"
	done
	sleep 1
	"$ERNICCTL" stats ernict0 >"$tmp/y2"
	kill "$spid"; wait "$spid" 2>/dev/null
	for b in 30 13 15; do
		d=$(( $(syn $b "$tmp/y2") - $(syn $b "$tmp/y1") ))
		[ "$d" = 5 ] || bad "syndrome $b counted $d times, not 5"
	done
	d=$(( $(syn 14 "$tmp/y2") - $(syn 14 "$tmp/y1") ))
	[ "$d" = 0 ] || bad "syndrome 14 counted $d times, not 0"
	grep "^syndrome \(13\|15\|30\) " "$tmp/y2"
fi

# VFIO: the BAR's sysfs resource file, at the window's offset in it (a
# fake sysfs tree: the file stands for the card's BAR 2, the ERNIC 4 KiB
# into it)
bdf=0000:00:05.0 res=$tmp/root/sys/bus/pci/devices/0000:00:05.0/resource2
mkdir -p "${res%/*}"
truncate -s $((4096 + 262144)) "$res"
put() { printf "$2" | dd of="$res" bs=1 seek=$((4096 + $1)) conv=notrunc status=none; }
put 0x20000 '\x78\x56\x34\x12'	# XRNICCONF
put 0x20100 '\x02\x00\x03\x00'	# INSRRPKTCNT: 2 SENDs, 3 READ responses
"$ERNICCTL" add ernicvd --vfio "$bdf" --vfio-root "$tmp/root" --bar 2 \
	--offset 4096 --addr 127.0.0.77 --mac 02:00:00:00:00:77 --netdev lo \
	--alone >/dev/null || bad "add of the VFIO device"
"$ERNICCTL" dump ernicvd >"$tmp/vd" || bad "VFIO dump failed"
grep -q "^0x20000 XRNICCONF 0x12345678$" "$tmp/vd" || bad "VFIO dump: XRNICCONF"
"$ERNICCTL" stats ernicvd >"$tmp/vs" || bad "VFIO stats failed"
grep -q "^INSRRPKTCNT 0x00030002 in-send 2 in-read-resp 3$" "$tmp/vs" ||
	bad "VFIO stats: INSRRPKTCNT"
"$ERNICCTL" del ernicvd || bad "del of the VFIO device"

# nobody left on the software device; wrong names are refused
out=$("$ERNICCTL" stats ernict1 | head -1)
[ "$out" = "no process has the device open" ] || bad "after the run: $out"
"$ERNICCTL" dump nosuchdev >"$tmp/o" 2>&1 && bad "dump of a missing device"
grep -q "no device named 'nosuchdev'" "$tmp/o" || bad "message: $(cat "$tmp/o")"
exit "$fail"
