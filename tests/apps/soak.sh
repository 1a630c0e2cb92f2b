#!/bin/bash
# SPDX-License-Identifier: MIT
# Soak: ernic_check, the byte-exact traffic checker, between two software
# ERNICs on lo while ernic_faultq drops, duplicates, reorders and
# corrupts their RoCEv2 packets (defaults: 5% drop, 5% duplicated, 5%
# reordered, 1% with one bit flipped), for SOAK_SECONDS (default 300).
# It passes when both sides verified every byte, immediate and
# completion (PASS with the same counts: nothing lost, nothing corrupted,
# no hang), every fault really happened, and the receivers counted
# exactly as many invalid packets (ICRC) as the injector corrupted: each
# flipped packet was caught.
#
#   tests/apps/soak.sh ERNIC_CHECK ERNIC_FAULTQ    (root; by hand: 5 min)
#
# ctest's app_soak runs it for SOAK_SECONDS=40. Tunables: SOAK_DROP,
# SOAK_DUP, SOAK_REORDER, SOAK_CORRUPT (percent), SOAK_SEED, SOAK_ARGS
# (more ernic_check options), SOAK_DEVS="DEV0 ADDR0 DEV1 ADDR1" (default
# the fixture's ernict0/ernict1).
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=SCRIPTDIR/../faultinj/faultq.sh
source "$(dirname "$0")/../faultinj/faultq.sh"
need_root "nftables, NFQUEUE, mknod"
need_cmds nft ss timeout stdbuf
CHECK=${1:?usage: soak.sh ERNIC_CHECK ERNIC_FAULTQ}
ERNIC_FAULTQ=${2:?usage: soak.sh ERNIC_CHECK ERNIC_FAULTQ}
export ERNIC_FAULTQ
: "${ERNIC_RUNDIR:?}" "${SYSFS_PATH:?}"

secs=${SOAK_SECONDS:-300}
seed=${SOAK_SEED:-$(date +%s)}
read -r d0 a0 d1 a1 <<<"${SOAK_DEVS:-ernict0 127.0.0.2 ernict1 127.0.0.3}"
define_host s0 "$d0" "$a0"
define_host s1 "$d1" "$a1"
APP_TIMEOUT=$((secs + 240))

faultq_start "ip saddr { $a0, $a1 } ip daddr { $a0, $a1 }" \
	--drop "${SOAK_DROP:-5}" --dup "${SOAK_DUP:-5}" \
	--reorder "${SOAK_REORDER:-5}" --corrupt "${SOAK_CORRUPT:-1}" \
	--seed "$seed"

# The faults end 3 s before the traffic does, so that every corrupted
# packet has reached a receiver that still counts it.
(
	sleep $((secs > 6 ? secs - 3 : 3))
	# shellcheck disable=SC2086 # "FAMILY NAME"
	"${FAULTQ_NFT[@]}" flush chain $FAULTQ_TABLE faultq
) &
BG_PIDS+=($!)

# Whole-WQE retransmission (PG332) under 5% loss: messages up to 16 KiB
# keep every try likely to get through; a long idle bound for the rare
# run of unlucky tries.
# shellcheck disable=SC2086 # SOAK_ARGS: words
if ! run_pair soak s0 s1 \
	-- "$CHECK" -d "$d0" -p @PORT@ \
	-- "$CHECK" -d "$d1" -p @PORT@ -T "$secs" -s "$seed" -q 8 -m 16K \
	-t 60 ${SOAK_ARGS:-} @SERVER@; then
	faultq_stop || true
	fail "ernic_check failed under faults (seed $seed)"
fi
faultq_stop

# the checker's PASS line: ops, bytes and the device's invalid count
field() { # FILE KEY
	sed -n "s/^ernic_check: PASS .* $2=\([0-9][0-9]*\).*/\1/p" "$1" | tail -n1
}
for f in "$PAIR_SERVER_OUT" "$PAIR_CLIENT_OUT"; do
	grep -E '^ernic_check: PASS ' "$f"
done
bytes=$(($(field "$PAIR_SERVER_OUT" bytes_verified) + $(field "$PAIR_CLIENT_OUT" bytes_verified)))
invalid=$(($(field "$PAIR_SERVER_OUT" invalid_rx) + $(field "$PAIR_CLIENT_OUT" invalid_rx)))
seen=$(faultq_stats seen)
dropped=$(faultq_stats dropped)
duplicated=$(faultq_stats duplicated)
reordered=$(faultq_stats reordered)
corrupted=$(faultq_stats corrupted)
corrupt_dup=$(faultq_stats corrupt_dup)
echo "soak: ${secs}s seed $seed: $seen packets: $dropped dropped, $duplicated duplicated," \
	"$reordered reordered, $corrupted corrupted ($corrupt_dup of them duplicated);" \
	"$invalid invalid at the receivers; $bytes bytes verified"
for k in dropped duplicated reordered corrupted; do
	[ "${!k}" -gt 0 ] || fail "the injector $k no packet: that fault was not tested"
done
# a corrupted packet's duplicate carries the flip too
[ "$invalid" = $((corrupted + corrupt_dup)) ] ||
	fail "$((corrupted + corrupt_dup)) corrupted packets arrived but $invalid counted invalid: a corrupted packet was not caught, or a good one refused"
[ "$bytes" -gt 0 ] || fail "no byte verified"
echo PASS
