#!/bin/bash
# SPDX-License-Identifier: MIT
# The RX side band block in RTL (hw/ernic_sideband.v) against the
# software ERNIC: real programs run between the fixture's software
# ERNICs ernict0 (127.0.0.2) and ernict1 (127.0.0.3) with
# ERNIC_AXI_TRACE set, so that each process's model writes what the IP's
# ports would carry and what it wrote itself (model/axi_trace.c). Each
# trace is replayed into the RTL under Icarus Verilog (hw/tb/), and the
# memory the RTL wrote must be byte-identical to the model's
# (tests/hw/sb_memcmp.c). Programs: Debian's ibv_rc_pingpong, ib_send_bw
# and rping (CM MADs on QP1), unmodified, and ernic_check for SEND and
# RDMA WRITE with immediate (Debian's perftest 4.5 has no
# --write_with_imm), also under ernic_faultq's drops, duplicates,
# reordering and corrupted packets.
# The block finds each stored packet's header itself: the trace carries
# every frame the model received (hw/ernic_rxhdr.v sniffs them), not
# which one the model stored. Replays alternate AXI and handshake RQ
# doorbells, vary how far the frames run ahead of the IP's writes, and
# add random back-pressure from memory and gaps in the frame stream. A
# corrupted expectation must fail.
#
#   usage: sideband.sh SRCDIR SB_MEMCMP ERNIC_FAULTQ   (ctest's ERNIC_TEST_ENV)
# shellcheck source=SCRIPTDIR/../apps/lib.sh
source "$(dirname "$0")/../apps/lib.sh"
# shellcheck source=SCRIPTDIR/../faultinj/faultq.sh
source "$(dirname "$0")/../faultinj/faultq.sh"
SRC=${1:?usage: sideband.sh SRCDIR SB_MEMCMP ERNIC_FAULTQ}
MEMCMP=${2:?usage: sideband.sh SRCDIR SB_MEMCMP ERNIC_FAULTQ}
ERNIC_FAULTQ=${3:?usage: sideband.sh SRCDIR SB_MEMCMP ERNIC_FAULTQ}
export ERNIC_FAULTQ
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds iverilog vvp ibv_rc_pingpong ib_send_bw rping ss nft
: "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}" "${ERNIC_CHECK:?}"

TB=$WORK/tb.vvp
iverilog -g2005 -Wall -o "$TB" "$SRC/hw/tb/tb_sideband.v" \
	"$SRC/hw/ernic_sideband.v" "$SRC/hw/ernic_rxhdr.v" \
	2>"$WORK/iverilog.log" || {
	cat "$WORK/iverilog.log" >&2
	fail "iverilog could not build the testbench"
}

NREPLAY=0 NPKT=0 NIMM=0 NCI=0 NFRAME=0 NBAD=0
# field KEY TEXT: the number after " KEY=" in the testbench's PASS line
field() { sed -nE "s/.* $1=([0-9]+)( .*|$)/\1/p" <<<"$2"; }
# replay DIR: every trace in DIR through the RTL, checked.
replay() {
	local dir=$1 cidelay=${2:-0} t base res hs stall look
	for t in "$dir"/*.trace; do
		[ -e "$t" ] || fail "$dir: no trace written (ERNIC_AXI_TRACE)"
		base=${t%.trace}
		hs=$((NREPLAY % 2)) stall=$(((NREPLAY * 17) % 40))
		look=$(((NREPLAY * 5) % 9))
		res=$(timeout 300 vvp -n "$TB" "+trace=$t" "+out=$base.out" \
			"+seed=$((NREPLAY + 1))" "+stall=$stall" "+hs=$hs" \
			"+cidelay=$cidelay" "+look=$look" 2>&1 | tail -n 3)
		NREPLAY=$((NREPLAY + 1))
		if ! grep -q '^TB PASS' <<<"$res"; then
			echo "$res" >&2
			case_failed "$(basename "$t")" "testbench failed"
			continue
		fi
		if ! "$MEMCMP" "$base.expect" "$base.out" >"$base.cmp"; then
			cat "$base.cmp" >&2
			case_failed "$(basename "$t")" "RTL memory differs from the model's"
			continue
		fi
		NPKT=$((NPKT + $(field packets "$res")))
		NIMM=$((NIMM + $(field ieth_beats "$res")))
		NCI=$((NCI + $(field ci_reads "$res")))
		NFRAME=$((NFRAME + $(field frames "$res")))
		NBAD=$((NBAD + $(field bad_icrc "$res")))
		echo "  $(basename "$t"): $(sed -E 's/^TB PASS trace=[^ ]* //' <<<"$res")"
		echo "    $(cat "$base.cmp")"
	done
}

# traced HOSTLABEL: hosts tN0/tN1 whose programs write traces to $WORK/N.
CASE=0
traced() {
	CASE=$((CASE + 1))
	TDIR=$WORK/trace$CASE
	mkdir -p "$TDIR"
	define_host "t${CASE}s" ernict0 127.0.0.2 "" "ERNIC_AXI_TRACE=$TDIR"
	define_host "t${CASE}c" ernict1 127.0.0.3 "" "ERNIC_AXI_TRACE=$TDIR"
	echo "== $1"
}

traced "ibv_rc_pingpong, 3000-byte SENDs at MTU 1024 (FIRST/MIDDLE/LAST)"
pingpong_case hw "t${CASE}s" "t${CASE}c" 3000 1024 40
replay "$TDIR"

traced "ibv_rc_pingpong, 1-byte SENDs at MTU 4096"
pingpong_case hw "t${CASE}s" "t${CASE}c" 1 4096 40
replay "$TDIR"

traced "ib_send_bw, 8 KiB SENDs"
perftest_case hw "t${CASE}s" "t${CASE}c" ib_send_bw 100 -s 8192
replay "$TDIR"

traced "ib_send_bw, 3000-byte SENDs at MTU 1024"
perftest_case hw "t${CASE}s" "t${CASE}c" ib_send_bw 100 -s 3000 -m 1024
replay "$TDIR"

traced "ernic_check: SEND, SEND with immediate, RDMA WRITE with immediate"
check_case hw "t${CASE}s" "t${CASE}c" -s 11 -q 2 -n 150 -m 6K --mtu 1024 \
	-o send,send_imm,write_imm
replay "$TDIR"

# More immediates on one QP than its IMMQ (256 entries) holds: the
# block's cached consumer index runs out and it reads RQWPTRDBADD + 64;
# replayed with software's index reaching memory 3000 cycles late, so
# that it finds the IMMQ full and holds the IP until it is not.
traced "ernic_check: 1500 immediates on one QP, IMMQ wrapping"
check_case hw "t${CASE}s" "t${CASE}c" -s 12 -q 1 -n 1500 -m 256 \
	-o send_imm,write_imm
replay "$TDIR" 3000

# Faults on the wire: the sniffer sees frames the IP drops (a corrupted
# ICRC), duplicates it must not take twice, and packets out of order
# whose retransmissions come later; the right header is still found.
traced "ernic_check under drops, duplicates, reordering and corruption"
faultq_start "ip saddr { 127.0.0.2, 127.0.0.3 } ip daddr { 127.0.0.2, 127.0.0.3 }" \
	--drop 2 --dup 3 --reorder 3 --corrupt 2 --seed 16
check_case hw "t${CASE}s" "t${CASE}c" -s 13 -q 2 -n 100 -m 4K --mtu 1024 \
	-t 60 -o send,send_imm,write_imm
faultq_stop
nbad0=$NBAD
replay "$TDIR"
[ "$NBAD" -gt "$nbad0" ] ||
	case_failed faults "no frame with a bad ICRC reached the sniffer"

# rping through our librdmacm: the CM's MADs land in QP1's RQ (UD
# SEND_ONLY frames, RXLEN with the frame length), then rping's SENDs.
traced "rping -V (connection set up by MADs on QP1)"
# shellcheck disable=SC2016 # expanded by the inner bash
words=$(bash -c 'eval "$("$0" env)" && printf "LD_PRELOAD=%s LD_LIBRARY_PATH=%s" \
	"$LD_PRELOAD" "$LD_LIBRARY_PATH"' "$ERNICCTL")
for h in "t${CASE}s" "t${CASE}c"; do HOST_ENV[$h]+=" $words"; done
# shellcheck disable=SC2317 # called through PAIR_READY
rdmacm_ready() { # HOST PORT
	on_host "$1" "$ERNICCTL" show "${HOST_DEV[$1]}" |
		grep -qE "^process .* listens (.*,)?tcp:$2(,|$)"
}
PAIR_READY=rdmacm_ready run_pair "rping" "t${CASE}s" "t${CASE}c" \
	-- rping -s -a 127.0.0.2 -p @PORT@ -S 100 -C 20 -V \
	-- rping -c -a @SERVER@ -I 127.0.0.3 -p @PORT@ -S 100 -C 20 -V ||
	case_failed rping "rping failed"
replay "$TDIR"
NMAD=$(cat "$TDIR"/*.trace | grep -c '^# H 1 64 ' || true)
[ "$NMAD" -gt 0 ] || case_failed qp1 "no MAD (QP1, UD SEND_ONLY) was replayed"
echo "ok: $NMAD MADs on QP1 replayed"

[ "$NIMM" -gt 0 ] || case_failed immediate "no ieth_immdt beat was replayed"
[ "$NCI" -gt 0 ] || case_failed back-pressure "the block never read the IMMQ consumer index"

# The check of the check: one byte of the model's side band changed
# must make sb_memcmp fail.
t=$(grep -l '^E [0-9a-f]* 4 ' "$WORK"/trace1/*.expect | head -n1)
sed -E '0,/^E ([0-9a-f]+) 4 ([0-9a-f]{6})([0-9a-f]{2})$/s//E \1 4 \2ee/' \
	"$t" >"$WORK/corrupt.expect"
if cmp -s "$t" "$WORK/corrupt.expect" ||
	"$MEMCMP" "$WORK/corrupt.expect" "${t%.expect}.out" >/dev/null; then
	case_failed self-test "a corrupted expected RXLEN byte was not caught"
else
	echo "ok: self-test: a changed expected byte makes sb_memcmp fail"
fi
# ... and of the sniffer: the frame of the first packet stored on an RC
# QP taken out of a trace, or one byte of it changed (its ICRC then
# fails), must make the block report that it has no header for a packet
# the IP stored, not write a side band from another one.
# mutate MODE TRACE: the trace without (drop) or with a corrupted (flip)
# frame of the first RC packet stored
mutate() {
	awk -v mode="$1" '
	{ line[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++)
			if (line[i] ~ /^# H / && split(line[i], f, " ") && f[3] != "1") {
				h = i; break
			}
		for (p = h; p > 0 && line[p] !~ /^P /; p--) ;
		for (e = p + 1; line[e] ~ /^F /; e++) ;
		for (i = 1; i <= NR; i++) {
			if (i >= p && i < e && mode == "drop") continue
			if (i == p + 1 && mode == "flip") {
				split(line[i], f, " ")
				# lane 50 (BTH PSN, under the ICRC): hex digits 27-28
				c = substr(f[3], 27, 1) == "0" ? "1" : "0"
				line[i] = f[1] " " f[2] " " substr(f[3], 1, 26) c substr(f[3], 28)
			}
			print line[i]
		}
	}' "$2"
}
t=$(ls "$WORK"/trace1/*.trace | head -n1)
for m in drop flip; do
	mutate $m "$t" >"$WORK/mut-$m.trace"
	res=$(timeout 300 vvp -n "$TB" "+trace=$WORK/mut-$m.trace" \
		"+out=$WORK/mut-$m.out" 2>&1 | tail -n 3)
	if cmp -s "$t" "$WORK/mut-$m.trace" ||
		! grep -q '^TB FAIL: the block raised err' <<<"$res"; then
		echo "$res" >&2
		case_failed "self-test-$m" "a trace with its first RC frame ${m}ped was not refused"
	else
		echo "ok: self-test: the first stored RC packet's frame ${m}ped: the block raises err"
	fi
done
echo "==== $NREPLAY traces replayed: $NFRAME frames sniffed ($NBAD with a bad ICRC), $NPKT packets stored ($NIMM with an ieth_immdt beat, $NCI IMMQ consumer index reads), memory byte-identical"
finish
