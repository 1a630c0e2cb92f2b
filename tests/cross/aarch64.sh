#!/bin/bash
# SPDX-License-Identifier: MIT
# The provider for the board's CPU: cross-builds the tree for aarch64
# (cmake/aarch64-linux-gnu.cmake, Debian's cross gcc and the arm64
# libraries of multiarch), checks the barriers the compiler emitted on the
# doorbell and register paths, and runs the register-level, model,
# data-path and non-coherent tests under qemu-user on the fixture's
# devices: software ERNICs (the model in the arm64 process) and virtual
# FPGAs (the host's ernic-vfpga driven through the arm64 UIO backend).
#   aarch64.sh SOURCE_DIR BUILD_DIR    (ctest cross_aarch64; root)
set -uo pipefail
src=${1:?source dir} out=${2:?build dir}/aarch64
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (the tests open the fixture's devices)"
	exit 77
fi
for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-objdump \
	 aarch64-linux-gnu-pkg-config qemu-aarch64; do
	if ! command -v "$t" >/dev/null; then
		echo "SKIP: $t missing (scripts/deps.sh installs the arm64 toolchain)"
		exit 77
	fi
done
if ! aarch64-linux-gnu-pkg-config --exists libibverbs libnl-route-3.0 cmocka; then
	echo "SKIP: arm64 -dev packages missing (scripts/deps.sh)"
	exit 77
fi
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# ---- build ----
targets=(ernic ernic-sw test_model_regs test_model_rx test_global test_qp
	 test_mr test_datapath)
if ! cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
	>"$out.configure.log" 2>&1; then
	cat "$out.configure.log"
	echo "FAIL: configuring the aarch64 build"
	exit 1
fi
if ! cmake --build "$out" -j"$(nproc)" --target "${targets[@]}" \
	>"$out.build.log" 2>&1; then
	grep -E "error|Error" "$out.build.log" | head -40
	echo "FAIL: building for aarch64 (log: $out.build.log)"
	exit 1
fi
lib=$out/lib/libernic.so.1
file -L "$lib" | grep -q "ARM aarch64" || bad "$lib is not an aarch64 object"

# ---- barriers, as emitted ----
# dis FUNC: FUNC's instructions, mnemonic and operands only.
dis() {
	aarch64-linux-gnu-objdump -d --no-show-raw-insn --disassemble="$1" "$lib" |
		awk -F'\t' 'NF >= 3 && $1 ~ /^ *[0-9a-f]+:$/ { print $2 " " $3 }'
}
# order FUNC A B: A occurs in FUNC, and B after it.
order() {
	dis "$1" | awk -v a="$2" -v b="$3" '
		index($0, a) == 1 { seen = 1; next }
		seen && index($0, b) == 1 { ok = 1 }
		END { exit !ok }'
}
for f in ua_reg_write va_reg_write; do
	# writel: the CPU's DMA-memory stores, outer shareable, then one str
	order "$f" "dmb oshst" "str " || bad "$f: no dmb oshst before its str"
	dis "$f" | grep -q "^stlr" && bad "$f: a store-release on the register"
done
for f in ua_reg_read va_reg_read; do
	order "$f" "ldr " "dmb oshld" || bad "$f: no dmb oshld after its ldr"
done
# The SQ doorbell leaves the barrier to the register write: no inner
# shareable barrier of its own (it only orders for the other CPUs).
d=$(dis ernic_sq_doorbell)
[ -n "$d" ] || bad "ernic_sq_doorbell not found in $lib"
echo "$d" | grep -Eq "^dmb (ish|ishst)$" && bad "ernic_sq_doorbell: dmb ish"
# On a mapped window it stores SQPI itself (ernic_wr_db): writel's order.
order ernic_sq_doorbell "dmb oshst" "str " ||
	bad "ernic_sq_doorbell: no dmb oshst before a str"
# A CQ's head word: a plain load, then dmb oshld before the CQEs.
dis ernic_poll_cq | grep -q "^dmb oshld" ||
	bad "ernic_poll_cq: no dmb oshld after reading the IP's words"
# Non-coherent: clean (dc cvac) or clean and invalidate (dc civac) by VA
# to the point of coherency, then dsb sy, in the UIO and VFIO dma_sync.
for f in ua_dma_sync va_dma_sync; do
	for op in "dc cvac" "dc civac" "dsb sy"; do
		dis "$f" | grep -q "^$op" || bad "$f: no $op"
	done
done
if [ "$fail" = 0 ]; then
	echo "barriers: writel = dmb oshst + str; readl = ldr + dmb oshld;" \
	     "doorbell words dmb oshld;" \
	     "non-coherent dc cvac / dc civac + dsb sy"
fi

# ---- tests under qemu-user ----
export RDMAV_DRIVERS=$out/lib/libernic
export ERNIC_TEST_SKIP_DEV="ernict6: qemu-user 7.2 refuses IPV6_DONTFRAG"
run() {		# NAME ENV... -- COMMAND...
	local name=$1 envs=() log rc
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	log=$out/$name.log
	env "${envs[@]}" timeout 600 qemu-aarch64 "$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q "PASSED" "$log"; then
		echo "ok   $name:" \
		     "$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1 passed/p' "$log")" \
		     "$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1 skipped/p' "$log")"
	else
		tail -30 "$log"
		bad "$name (rc $rc; log: $log)"
	fi
}
run model_regs -- "$out/bin/test_model_regs"
run model_rx -- "$out/bin/test_model_rx"
run global -- "$out/bin/test_global"
run qp -- "$out/bin/test_qp"
run mr -- "$out/bin/test_mr"
# Not test_query: qemu-user answers libibverbs' RDMA_VERBS_IOCTL with
# ENOSYS where the kernel says ENOTTY, so ibv_query_gid does not fall
# back to sysfs there.
for g in post wire events mad sge cqex; do
	run "datapath_$g" -- "$out/bin/test_datapath" "$g"
	run "datapath_${g}_uio" "DP_A=ernicu0 127.0.0.52" "DP_B=ernicu1 127.0.0.53" \
		DP_VFPGA=1 -- "$out/bin/test_datapath" "$g"
	run "datapath_${g}_noncoherent" "DP_A=ernicn0 127.0.0.62" \
		"DP_B=ernicn1 127.0.0.63" DP_NONCOHERENT=1 -- \
		"$out/bin/test_datapath" "$g"
done
exit "$fail"
