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
echo "PASS: no failure, every skip explained, $passed passed"
