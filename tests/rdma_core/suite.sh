#!/bin/bash
# SPDX-License-Identifier: MIT
# ctest rdma_core_suite: rdma-core v44's own tests (run_tests.py, from
# Debian's python3-pyverbs) against the software device ernict0, with the
# environment a user gets from `ernicctl env`. They are run from a
# decompressed copy made here (/usr/share/doc/rdma-core/tests has some
# files gzipped); nothing of them is kept in this repository.
#
# Passes when no test fails or errors, every skip gives a reason listed in
# skips.txt (a capability the device honestly reports absent), at least
# MIN_PASS tests pass and the key traffic tests are among them.
#
# Then the rdma_cm tests (test_rdmacm) once more, where they can run: they
# find a device's netdev only at the fixed path
# /sys/class/infiniband/DEV/device/net/ and take that netdev's first
# address. So they get a device of their own on lo's 127.0.0.1, in private
# network and mount namespaces where /sys/class is the overlay's. Each
# test runs its passive and active sides as two processes on that one
# device, connecting through our librdmacm.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=/usr/share/doc/rdma-core/tests
PY=/usr/bin/python3		# Debian's: pyverbs is not on other Pythons
DEV=${RDMA_CORE_DEV:-ernict0}
MIN_PASS=39
KEY_TESTS=(test_qp_ex_rc_send test_qp_ex_rc_rdma_write_imm
	test_qp_ex_rc_rdma_read test_ro_rc_traffic test_rc_traffic_cq_ex
	test_cq_events_rc)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the ernicdevs fixture)"; exit 77; }
if ! [ -r "$SRC/run_tests.py" ] || ! "$PY" -c 'import pyverbs' 2>/dev/null; then
	fail "rdma-core's tests or pyverbs missing: scripts/deps.sh installs python3-pyverbs"
fi
: "${ERNICCTL:?run through ctest (ERNICCTL, ERNIC_RUNDIR)}"

WORK=$(mktemp -d /tmp/ernic-rdma-core.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC" "$WORK/tests"
find "$WORK/tests" -name '*.gz' -exec gunzip {} +
eval "$("$ERNICCTL" env)"

set +e
(cd "$WORK/tests" && timeout 900 "$PY" run_tests.py --dev "$DEV" -v) \
	> "$WORK/out" 2>&1
rc=$?
set -e

# unittest -v: "name (class) ... ok", or "skipped 'reason'" (or with
# double quotes when the reason has a quote); a result follows the
# test's own output on a line of its own.
reasons() {
	sed -nE "s/^(.* \.\.\. )?skipped (['\"])(.*)\2$/\3/p" "$WORK/out"
}
ran=$(sed -nE 's/^Ran ([0-9]+) tests? in .*/\1/p' "$WORK/out")
passed=$(grep -cE ' \.\.\. ok$|^ok$' "$WORK/out" || true)
skipped=$(reasons | wc -l)
bad=$(grep -E ' \.\.\. (FAIL|ERROR)$|^(FAIL|ERROR): ' "$WORK/out" || true)
echo "rdma-core tests on $DEV: ran ${ran:-?}, passed $passed, skipped" \
	"$skipped, exit $rc"
echo "skipped, by reason:"
reasons | sort | uniq -c | sort -rn

if [ -n "$bad" ] || [ "$rc" != 0 ] || [ -z "$ran" ]; then
	tail -n 80 "$WORK/out"
	fail "the suite failed (exit $rc): ${bad:-no summary}"
fi
# Every skip reason must be one skips.txt explains.
pat=$(grep -vE '^(#|$)' "$HERE/skips.txt" | cut -f1 | paste -sd'|')
unexplained=$(reasons | grep -vE "$pat" | sort -u || true)
if [ -n "$unexplained" ]; then
	grep -F -f <(echo "$unexplained") "$WORK/out" >&2
	fail "skips not explained in tests/rdma_core/skips.txt (above)"
fi
[ $((passed + skipped)) = "$ran" ] ||
	fail "$ran tests ran, but $passed passed and $skipped skipped"
[ "$passed" -ge "$MIN_PASS" ] ||
	fail "only $passed tests passed, $MIN_PASS did before: a capability lost?"
for t in "${KEY_TESTS[@]}"; do
	grep -qE "^$t \(.*\) \.\.\. ok$" "$WORK/out" || {
		grep -E "^$t \(" "$WORK/out" >&2 || true
		fail "$t did not pass"
	}
done
echo "rdma-core tests: no failure, every skip explained, $passed passed"

# test_rdmacm_async_udp_traffic is not run: RDMA_PS_UDP needs UD QPs,
# which the ERNIC does not have (RC only), and the test has no skip path
# for that (rdma_getaddrinfo's EPROTONOSUPPORT makes it an error).
CM_TESTS=(sync_traffic async_traffic async_read async_write
	async_reject_traffic async_traffic_external_qp)
CM_SKIPS=(async_multicast_traffic async_ex_multicast_traffic
	async_ex_leave_multicast_traffic)
names=()
for t in "${CM_TESTS[@]}" "${CM_SKIPS[@]}"; do
	names+=("test_rdmacm.CMTestCase.test_rdmacm_$t")
done
mkdir -p /dev/infiniband
set +e
# shellcheck disable=SC2016 # expanded by the inner shell
WORK=$WORK PY=$PY ERNICCTL=$ERNICCTL unshare --net --mount --propagation private \
	bash -c '
set -eu
ip link set lo up
# our own uverbs node and device, seen by nobody else
mount -t tmpfs tmpfs /dev/infiniband
export ERNIC_RUNDIR=$WORK/cmrun
mkdir -p "$ERNIC_RUNDIR"
"$ERNICCTL" add ernicm0 --sw 127.0.0.1 >/dev/null
mount --bind "$ERNIC_RUNDIR/sysfs/class" /sys/class
eval "$("$ERNICCTL" env)"
cd "$WORK/tests"
timeout 300 "$PY" run_tests.py --dev ernicm0 -v "$@"' cm "${names[@]}" \
	> "$WORK/cmout" 2>&1
rc=$?
set -e
cm_ok=$(grep -cE '^test_rdmacm_.* \.\.\. ok$' "$WORK/cmout" || true)
echo "rdma-core rdma_cm tests on their own device: ${#names[@]} run, $cm_ok passed, exit $rc"
grep -E '^test_rdmacm_.* \.\.\. ' "$WORK/cmout" | sed 's/ (tests[^)]*)//; s/^/    /'
if [ "$rc" != 0 ] || grep -qE ' \.\.\. (FAIL|ERROR)$|^(FAIL|ERROR): ' "$WORK/cmout"; then
	tail -n 60 "$WORK/cmout"
	fail "rdma-core's rdma_cm tests failed (exit $rc)"
fi
for t in "${CM_TESTS[@]}"; do
	grep -qE "^test_rdmacm_$t \(.*\) \.\.\. ok$" "$WORK/cmout" ||
		fail "test_rdmacm_$t did not pass"
done
for t in "${CM_SKIPS[@]}"; do
	grep -qE "^test_rdmacm_$t \(.*\) \.\.\. skipped 'Multicast is not supported on this device'$" \
		"$WORK/cmout" || fail "test_rdmacm_$t: want the multicast skip"
done
echo "PASS: no failure, every skip explained, $passed + $cm_ok passed"
