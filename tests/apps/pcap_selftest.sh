#!/bin/bash
# SPDX-License-Identifier: MIT
# The capture checks themselves, on hand-made packets (no root, no
# device needed): icrc_check's own selftest (a ConnectX-4 Lx packet);
# check_capture accepts a good capture and rejects a missing opcode;
# icrc_check and tshark catch a corrupted ICRC and a truncated packet;
# icrc_check cuts a UDP GSO train seen whole and checks every packet.
#   usage: pcap_selftest.sh PATH/TO/icrc_check
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_cmds tshark
ICRC_CHECK=$(readlink -f "${1:?usage: $0 PATH/TO/icrc_check}")
ICRC_CHECK_ARGS='' # no model traffic here: the independent check only

"$ICRC_CHECK" --selftest || fail "icrc_check --selftest"
"$ICRC_CHECK" --write-sample good "$WORK/good.pcap" || fail "--write-sample good"
"$ICRC_CHECK" --write-sample bad "$WORK/bad.pcap" || fail "--write-sample bad"

# Good: SEND_ONLY, WRITE_ONLY, READ_REQ, ACK; IP checksums verified;
# a UDP GSO train of three SEND_ONLYs, as lo carries it, cut and each
# packet checked.
check_capture "$WORK/good.pcap" 1 0x04 0x0a 0x0c 0x11
out=$("$ICRC_CHECK" "$WORK/good.pcap" 2>&1) || fail "icrc_check on the good capture"
grep -q 'trains seen whole: 1, holding 3 packets' <<<"$out" ||
	fail "icrc_check did not cut the train: $out"
echo "ok: a good capture passes"
if (check_capture "$WORK/good.pcap" 1 0x00) >/dev/null 2>&1; then
	fail "check_capture accepted a capture without opcode 0x00"
fi
echo "ok: a missing opcode fails"

# Bad: frame 2's ICRC is off by one bit, frame 5 is too short for a BTH,
# the second packet of frame 6's train has a bad ICRC.
rc=0
out=$("$ICRC_CHECK" "$WORK/bad.pcap" 2>&1) || rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "icrc_check on a bad capture: exit $rc, want 1"
grep -q 'frame 2: WRITE_ONLY PSN 2 QP 0x000003: ICRC' <<<"$out" ||
	fail "icrc_check did not report the corrupted ICRC of frame 2"
grep -q 'frame 5: malformed RoCEv2 packet: too short' <<<"$out" ||
	fail "icrc_check did not report the truncated frame 5"
grep -q 'frame 6: SEND_ONLY PSN 1 QP 0x000002: ICRC' <<<"$out" ||
	fail "icrc_check took the train with a bad packet in frame 6"
n=$(tshark -r "$WORK/bad.pcap" -d 'udp.port==4791,infiniband' \
	-Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "tshark found $n malformed packets in the bad capture, want 1"
if (check_capture "$WORK/bad.pcap" 1) >/dev/null 2>&1; then
	fail "check_capture accepted the bad capture"
fi
echo "ok: a corrupted ICRC and a truncated packet are caught"
finish
