#!/bin/bash
# SPDX-License-Identifier: MIT
# rdmacm_relisten (tests/rdmacm_relisten.c): a REQ that comes while its
# server is between two listens on the port is held for the next
# listener (CM_RELISTEN_HOLD_MS), not rejected: the server's CM counts it
# held and answers nothing unknown, the client's CM never had to send it
# again. A kernel rdma_cm client takes that REJ as final (perftest -R's
# second connection to our server failed so against rxe).
#   rdmacm_relisten.sh RDMACM_RELISTEN
#   environment: ERNICCTL
# The devices are in an overlay of their own: ernicz0 on 127.0.0.78
# (server), ernicz1 on 127.0.0.79 (client).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
need_root "the devices' /dev/infiniband nodes are made with mknod"
prog=${1:?usage: rdmacm_relisten.sh RDMACM_RELISTEN}
: "${ERNICCTL:?}"

add_local_devices ernicz0 127.0.0.78 ernicz1 127.0.0.79

# stat DEVICE NAME: that counter of DEVICE's CM from ERNIC_CM_STATS.
stat() {
	sed -n "s/.* $1 CM: .* $2 \([0-9]*\).*/\1/p" "$WORK/err" | head -1
}
# GAP_MS: the server listens again that long after the client's connect;
# within CM_RELISTEN_HOLD_MS (250).
for gap in 100 200; do
	ERNIC_CM_STATS=1 timeout 60 "$prog" -g "$gap" 127.0.0.78 127.0.0.79 \
		18630 >"$WORK/out" 2>"$WORK/err" ||
		fail "rdmacm_relisten -g $gap failed (exit $?): $(cat "$WORK/err")"
	cat "$WORK/out"
	held=$(stat ernicz0 held) unknown=$(stat ernicz0 rx_unknown)
	resent=$(stat ernicz1 no_listener_resends)
	if [ "$held" != 1 ] || [ "$unknown" != 0 ] || [ "$resent" != 0 ]; then
		fail "-g $gap: server CM held '$held' (want 1), rx_unknown" \
			"'$unknown' (want 0); client CM no_listener_resends" \
			"'$resent' (want 0): $(cat "$WORK/err")"
	fi
	echo "ok: -g $gap: the REQ held by the server's CM, taken by its next listener"
done
echo "PASS"
