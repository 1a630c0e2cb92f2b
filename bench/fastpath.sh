#!/bin/bash
# SPDX-License-Identifier: MIT
# Instructions per verb on the provider's fast path, counted by callgrind
# on bench/fastpath.c: a signaled RDMA WRITE post_send, a successful
# poll_cq, an empty poll_cq (with 0 and FASTPATH_IDLE idle QPs on the
# CQ, and spinning for a posted receive) and a post_recv. Two columns:
# two software ERNICs (the model in the program), and two virtual FPGAs
# (ernic-vfpga) that the provider drives through its UIO backend as it
# drives a board: registers are stores and loads in a mapped window.
#
# Only the verb's own call tree is counted (--toggle-collect), less what
# the model does inside it: on a software device a register access is a
# call into the model, on hardware one load or store (the UIO column has
# no model in the program to leave out). Each figure is the
# count over FASTPATH_N calls divided by FASTPATH_N; symbols are bound at
# load (LD_BIND_NOW), so first calls cost little more than the rest.
# valgrind runs one thread at a time: --fair-sched hands the engine
# threads their turns while the program spins on its CQ.
# Numbers, not a verdict. Root (device nodes); needs valgrind.
#   FASTPATH_N (default 5000)  FASTPATH_IDLE (default 16)
#   FASTPATH_SAVE=DIR keeps callgrind's files there (callgrind_annotate)
#   FASTPATH_DEVS="A B": count on these two devices only (already made,
#   in the caller's overlay) instead of making fpath0 and fpath1 (sw)
#   and fpathu0 and fpathu1 (--sim-uio)
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" ernic-fastpath
need_cmds valgrind callgrind_annotate
n=${FASTPATH_N:-5000} idle=${FASTPATH_IDLE:-16}
prog=$(readlink -f "$build/bin/ernic-fastpath")

# Column title and device pair, one per column.
cols=()
if [ -n "${FASTPATH_DEVS:-}" ]; then
	# Two devices the caller made (bench/perftest.sh), in its overlay.
	cols=("instr $FASTPATH_DEVS")
else
	export ERNIC_RUNDIR=$WORK/run
	eval "$("$ERNICCTL" env)"
	define_host b0 fpath0 127.0.0.2
	define_host b1 fpath1 127.0.0.3
	add_device b0 127.0.0.2
	add_device b1 127.0.0.3
	for u in 0 1; do
		"$ERNICCTL" add "fpathu$u" --sim-uio "127.0.0.5$((u + 4))" >/dev/null ||
			fail "cannot create the virtual FPGA fpathu$u"
		at_exit "$ERNICCTL" del "fpathu$u"
	done
	cols=("sw fpath0 fpath1" "uio fpathu0 fpathu1")
fi

# The model's entry points: what a register access costs on a software
# device and not on hardware, the engine pass an empty poll lends its
# thread to (ernic_progress) and the engine thread's taking back its
# port when polling ends (ernic_progress_stop); hardware has neither.
model_fns=(ernic_model_reg_write ernic_model_reg_read ernic_model_progress
	ernic_model_progress_stop)

# count VERB MODE N IDLE: instructions collected in VERB on dev_a and
# dev_b, model excluded.
count() {
	local verb=$1 mode=$2 calls=$3 nidle=$4
	local out=$WORK/cg.$dev_a.$1.$2.$3.$4
	LD_BIND_NOW=1 valgrind --tool=callgrind --fair-sched=yes \
		--callgrind-out-file="$out" \
		--collect-atstart=no --toggle-collect="$verb" \
		"$prog" -a "$dev_a" -b "$dev_b" -m "$mode" -n "$calls" \
		-i "$nidle" >"$out.log" 2>&1 || {
		echo "fastpath: callgrind $mode run failed:" >&2
		grep -v "^==" "$out.log" | tail -n 5 >&2
		return 1
	}
	[ -z "${FASTPATH_SAVE:-}" ] || cp "$out" "$FASTPATH_SAVE/"
	grep -q " miss=0 " "$out.log" ||
		echo "warning: $mode: $(grep -o 'miss=[0-9]*' "$out.log") polls found nothing" >&2
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$out" 2>/dev/null |
		awk -v fns="${model_fns[*]}" '
		BEGIN { split(fns, f, " "); for (k in f) want[f[k]] = 1 }
		/PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
		{ for (k in want) if ($0 ~ ("[:*] *" k " ")) {
			v = $1; gsub(",", "", v); model += v } }
		END { printf "%d\n", total - model }'
}

rows=()
# row TEXT GOAL VERB MODE IDLE: a table row of count / N, per column.
row() {
	local c col line=$1
	for col in "${cols[@]}"; do
		read -r _ dev_a dev_b <<<"$col"
		c=$(count "$3" "$4" "$n" "$5") || exit 1
		line+="|$(awk -v c="$c" -v n="$n" 'BEGIN { printf "%.0f", c / n }')"
	done
	rows+=("$line|$2")
}

echo "counting (callgrind, N=$n calls per row) ..." >&2
row "post_send, signaled 64 B WRITE" 200 ernic_post_send send 0
row "poll_cq, one completion" 150 ernic_poll_cq poll 0
row "poll_cq, empty" 60 ernic_poll_cq empty 0
row "poll_cq, empty, $idle idle QPs" 60 ernic_poll_cq empty "$idle"
row "poll_cq, empty, a receive posted" 60 ernic_poll_cq wait 0
row "post_recv" 100 ernic_post_recv recv 0
echo
echo "provider fast path, instructions per call (callgrind, model excluded)"
head=$(printf '%-34s' verb)
for col in "${cols[@]}"; do
	head+=$(printf ' %6s' "${col%% *}")
done
echo "$head$(printf ' %6s' goal)"
for r in "${rows[@]}"; do
	IFS='|' read -r -a f <<<"$r"
	line=$(printf '%-34s' "${f[0]}")
	for v in "${f[@]:1}"; do
		line+=$(printf ' %6s' "$v")
	done
	echo "$line"
done
