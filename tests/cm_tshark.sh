#!/bin/bash
# SPDX-License-Identifier: MIT
# Every CM message test_cm_msg packs, in a RoCEv2 frame, decodes in
# Wireshark's InfiniBand dissector as the CM attribute it is, with the
# fields it was given, no malformed packet and no expert warning.
#   usage: cm_tshark.sh TEST_CM_MSG
set -euo pipefail
bin=${1:?usage: cm_tshark.sh TEST_CM_MSG}
command -v tshark >/dev/null || { echo "FAIL: tshark is not installed (scripts/deps.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WIRESHARK_CONFIG_DIR=$work/ws
"$bin" --pcap "$work/cm.pcap"
fields=(-e infiniband.mad.attributeid -e infiniband.cm.req.localqpn
	-e infiniband.cm.req.startpsn -e infiniband.cm.req.serviceid.dport
	-e infiniband.cm.req.ip_cm.sip4 -e infiniband.cm.req.ip_cm.dip4
	-e infiniband.cm.rej.reason -e _ws.malformed -e _ws.expert)
tshark -r "$work/cm.pcap" -d udp.port==4791,infiniband \
	--disable-protocol rpcordma -T fields -E separator='|' "${fields[@]}" \
	>"$work/out" 2>"$work/err" || { cat "$work/err"; echo "FAIL: tshark"; exit 1; }
cat "$work/out"
want=("0x0010|0xabcdef|0xfedcba|0x1d2f|127.0.0.2|127.0.0.3|||"
      "0x0013||||||||"
      "0x0014||||||||"
      "0x0012||||||0x0008||"
      "0x0011||||||||"
      "0x0015||||||||"
      "0x0016||||||||")
mapfile -t got <"$work/out"
[ "${#got[@]}" = 7 ] || { echo "FAIL: ${#got[@]} frames decoded, want 7"; exit 1; }
for k in "${!want[@]}"; do
	[ "${got[k]}" = "${want[k]}" ] ||
		{ echo "FAIL: frame $((k + 1)): '${got[k]}', want '${want[k]}'"; exit 1; }
done
echo "PASS: 7 CM messages decode as REQ REP RTU REJ MRA DREQ DREP"
