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
# --write_with_imm).
# Replays alternate AXI and handshake RQ doorbells and random
# back-pressure from memory. A corrupted expectation must fail.
#
#   usage: sideband.sh SRCDIR SB_MEMCMP   (ctest's ERNIC_TEST_ENV)
# shellcheck source=SCRIPTDIR/../apps/lib.sh
source "$(dirname "$0")/../apps/lib.sh"
SRC=${1:?usage: sideband.sh SRCDIR SB_MEMCMP}
MEMCMP=${2:?usage: sideband.sh SRCDIR SB_MEMCMP}
need_root "the devices' /dev/infiniband nodes are made with mknod"
need_cmds iverilog vvp ibv_rc_pingpong ib_send_bw rping ss
: "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}" "${ERNIC_CHECK:?}"

TB=$WORK/tb.vvp
iverilog -g2005 -Wall -o "$TB" "$SRC/hw/tb/tb_sideband.v" \
	"$SRC/hw/ernic_sideband.v" 2>"$WORK/iverilog.log" || {
	cat "$WORK/iverilog.log" >&2
	fail "iverilog could not build the testbench"
}

NREPLAY=0 NPKT=0 NIMM=0 NCI=0
# replay DIR: every trace in DIR through the RTL, checked.
replay() {
	local dir=$1 cidelay=${2:-0} t base res n=0 hs stall
	for t in "$dir"/*.trace; do
		[ -e "$t" ] || fail "$dir: no trace written (ERNIC_AXI_TRACE)"
		base=${t%.trace}
		hs=$((NREPLAY % 2)) stall=$(((NREPLAY * 17) % 40))
		res=$(timeout 300 vvp -n "$TB" "+trace=$t" "+out=$base.out" \
			"+seed=$((NREPLAY + 1))" "+stall=$stall" "+hs=$hs" \
			"+cidelay=$cidelay" 2>&1 | tail -n 3)
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
		n=$(sed -nE 's/.* packets=([0-9]+) .*/\1/p' <<<"$res")
		NPKT=$((NPKT + n))
		NIMM=$((NIMM + $(sed -nE 's/.* ieth_beats=([0-9]+) .*/\1/p' <<<"$res")))
		NCI=$((NCI + $(sed -nE 's/.* ci_reads=([0-9]+) .*/\1/p' <<<"$res")))
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
NMAD=$(cat "$TDIR"/*.trace | grep -c '^H 1 64 ' || true)
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
echo "==== $NREPLAY traces replayed, $NPKT packets ($NIMM with an ieth_immdt beat, $NCI IMMQ consumer index reads) byte-identical"
finish
