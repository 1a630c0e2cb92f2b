#!/bin/bash
# SPDX-License-Identifier: MIT
# ECN end to end between the fixture's software ERNICs ernict0
# (127.0.0.2) and ernict1 (127.0.0.3): nftables marks one in eight
# RoCEv2 packets toward 127.0.0.3 Congestion Experienced while Debian's
# ib_write_bw, unmodified, writes from ernict0 to ernict1. ernict1's
# model flags the QP (CNPSCHDSTSn, INTSTS[8]) and its provider sends CNPs
# through QP1; ernict0's model counts them and cuts the QP's outstanding
# requests to 8. Checked: the run completes; the rule marked packets;
# tshark decodes CNPs (opcode 0x81) from 127.0.0.3 to exactly the QP
# ib_write_bw reported, every ICRC valid (icrc_check), in a short
# captured run; `ernicctl stats` during a 4-second run shows them in
# ernict1's OUTCNPPKTCNT and ernict0's INCNPPTKTCNT. The same runs with
# no marks send no CNP.
#   usage: ecn.sh PATH/TO/icrc_check
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "nftables, packet capture, mknod"
need_cmds nft dumpcap tshark ib_write_bw ss
: "${ERNICCTL:?}" "${SYSFS_PATH:?}"
ICRC_CHECK=$(readlink -f "${1:?usage: $0 PATH/TO/icrc_check}")

define_host e0 ernict0 127.0.0.2
define_host e1 ernict1 127.0.0.3
TABLE=(inet "ernic_ecn_$$")

# ecn_rules MOD: mark one in MOD packets to ernict1 (0: none).
ecn_rules() {
	nft delete table "${TABLE[@]}" 2>/dev/null || true
	{
		echo "table ${TABLE[*]} {"
		echo "  chain out {"
		echo "    type filter hook output priority 0; policy accept;"
		[ "$1" = 0 ] ||
			echo "    ip daddr 127.0.0.3 udp dport 4791 numgen random mod $1 0 ip ecn set ce counter comment \"marked\""
		echo "  }"
		echo "}"
	} | nft -f - || fail "cannot install the nftables ECN rule"
}
at_exit nft delete table "${TABLE[@]}"

marked() {
	nft list table "${TABLE[@]}" | awk '/comment "marked"/ {
		for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

# counter FILE NAME: a register's value in an `ernicctl stats` output.
counter() {
	local v
	v=$(awk -v r="$2" '$1 == r { print $2; exit }' "$1")
	[ -n "$v" ] && echo $((v))
}

# run LABEL ARGS...: ib_write_bw ernict0 -> ernict1 with ARGS; with
# "-D" among them, `ernicctl stats` of both ends is taken while it runs,
# else the run is captured (short: dumpcap cannot keep up with lo at
# full speed).
run() {
	local label=$1 spid cpid rc=0 i timed=0
	shift
	[[ " $* " != *" -D "* ]] || timed=1
	[ "$timed" = 1 ] || capture_start e0 lo "$WORK/$label.pcap" e0 e1
	on_host e1 timeout 60 ib_write_bw -d ernict1 -x 0 -p 18777 "$@" \
		>"$WORK/$label.srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	for ((i = 0; i < 50; i++)); do
		listening e1 18777 && break
		sleep 0.1
	done
	on_host e0 timeout 60 ib_write_bw -d ernict0 -x 0 -p 18777 "$@" \
		127.0.0.3 >"$WORK/$label.cli" 2>&1 &
	cpid=$!
	BG_PIDS+=("$cpid")
	if [ "$timed" = 1 ]; then
		sleep 3
		"$ERNICCTL" stats ernict0 >"$WORK/$label.st0" || fail "$label: stats ernict0"
		"$ERNICCTL" stats ernict1 >"$WORK/$label.st1" || fail "$label: stats ernict1"
	fi
	wait "$cpid" || rc=$?
	wait "$spid" || rc=$((rc ? rc : $?))
	[ "$timed" = 1 ] || capture_stop
	if [ "$rc" != 0 ] || ! grep -Eq "^ [0-9]+ +[0-9]+ " "$WORK/$label.cli"; then
		show_output client "$WORK/$label.cli"
		show_output server "$WORK/$label.srv"
		fail "$label: ib_write_bw failed"
	fi
	QPN=$(awk '/local address/ { sub(/,/, "", $6); print $6; exit }' "$WORK/$label.cli")
	[[ "$QPN" =~ ^0x[0-9a-fA-F]+$ ]] || fail "$label: no QPN in ib_write_bw's output"
	QPN=$((QPN))
	echo "$label: $(grep -E '^ [0-9]+ +[0-9]+ ' "$WORK/$label.cli" | awk '{ print $1 " B, " $4 " MB/s" }'), QP $QPN"
}

# cnps FILE: "SRC DST DESTQP" of every CNP in the capture.
cnps() {
	tshark -r "$1" -d 'udp.port==4791,infiniband' \
		-Y 'infiniband.bth.opcode == 0x81' -T fields \
		-e ip.src -e ip.dst -e infiniband.bth.destqp 2>/dev/null
}

ecn_rules 0
run quiet -s 8192 -n 1000
n=$(cnps "$WORK/quiet.pcap" | wc -l)
echo "quiet: $n CNPs"
[ "$n" = 0 ] || fail "quiet: $n CNPs with no packet marked"
run quiet_stats -s 65536 -D 4
[ "$(counter "$WORK/quiet_stats.st1" OUTCNPPKTCNT)" = 0 ] ||
	fail "quiet: ernict1 counts CNPs sent"

ecn_rules 8
run marked -s 8192 -n 1000
m=$(marked)
echo "marked: nftables set CE on $m packets"
[ "${m:-0}" -gt 0 ] || fail "the rule marked no packet"
cnps "$WORK/marked.pcap" >"$WORK/cnps"
n=$(wc -l <"$WORK/cnps")
echo "marked: $n CNPs captured"
[ "$n" -gt 0 ] || fail "marked: no CNP on the wire"
while read -r src dst qp; do
	if [ "$src" != 127.0.0.3 ] || [ "$dst" != 127.0.0.2 ] ||
		[ $((qp)) != "$QPN" ]; then
		fail "marked: a CNP not from ernict1 to QP $QPN: $src $dst $qp"
	fi
done <"$WORK/cnps"
# sed, not head: head would leave once it has two lines and tshark, still
# writing (over 4 KiB for ~60 CNPs or more), die of SIGPIPE under pipefail
tshark -r "$WORK/marked.pcap" -d 'udp.port==4791,infiniband' \
	-Y 'infiniband.bth.opcode == 0x81' 2>/dev/null | sed -n 1,2p
# WRITEs, their ACKs and the CNPs: all decode, every ICRC verified.
check_capture "$WORK/marked.pcap" 0 '0x0[6-8a]' 0x11 0x81
run marked_stats -s 65536 -D 4
out=$(counter "$WORK/marked_stats.st1" OUTCNPPKTCNT)
in=$(counter "$WORK/marked_stats.st0" INCNPPTKTCNT)
echo "marked: ernict1 OUTCNPPKTCNT $out, ernict0 INCNPPTKTCNT $in (during the run)"
[ "${out:-0}" -gt 0 ] || fail "ernict1 counted no CNP sent"
[ "${in:-0}" -gt 0 ] || fail "ernict0 counted no CNP received"
finish
