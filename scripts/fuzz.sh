#!/bin/bash
# The fuzz targets (tests/fuzz/), by hand for as long as you like, with
# a line-coverage report of the code they reach at the end:
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]
#
# SECONDS per target (default 3600), TARGET among model_rx conf
# provider_rx cm (default all). Corpora grow in build/fuzz-long/TARGET and
# are kept between runs; a crash leaves its input there as crash-* with
# the command that reproduces it. Builds what it needs (clang).
#
# ctest runs each target briefly through the same script:
#   scripts/fuzz.sh --run BIN SEEDS WORKDIR SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."

# One bounded run: a fresh corpus from SEEDS in WORKDIR, SECONDS long.
# Prints libFuzzer's final statistics; fails on any crash, leak, timeout
# or sanitizer report, naming the input that caused it.
run() {
	local bin=$1 seeds=$2 work=$3 secs=$4 rc=0
	rm -rf "$work"
	mkdir -p "$work/corpus"
	cp "$seeds"/* "$work/corpus/"
	echo "$(basename "$bin"): $(find "$work/corpus" -type f | wc -l) seeds, ${secs}s"
	"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$work/" \
		"$work/corpus" >"$work/log" 2>&1 || rc=$?
	grep -E '^(stat::|#[0-9]+ +DONE)' "$work/log" || true
	if [ "$rc" != 0 ]; then
		tail -n 60 "$work/log"
		for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* \
			"$work"/oom-*; do
			[ -e "$a" ] && echo "reproduce: $bin $a"
		done
		echo "FAIL: $(basename "$bin") exited $rc"
		return 1
	fi
	echo "ok: $(basename "$bin"): $(find "$work/corpus" -type f | wc -l) inputs in the corpus"
}

if [ "${1:-}" = --run ]; then
	shift
	run "$@"
	exit
fi

secs=${1:-3600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_rx conf provider_rx cm)
command -v clang >/dev/null || { echo "clang is not installed (scripts/deps.sh)"; exit 1; }

# The targets, and a copy built for source-based coverage.
cmake -S tests/fuzz -B build/fuzz-hand -DCMAKE_C_COMPILER=clang \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz-hand -j"$(nproc)" >/dev/null
cmake -S tests/fuzz -B build/fuzz-cov -DCMAKE_C_COMPILER=clang \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DERNIC_FUZZ_COVERAGE=ON >/dev/null
cmake --build build/fuzz-cov -j"$(nproc)" >/dev/null
build/fuzz-hand/mkcorpus build/fuzz-long/seeds >/dev/null

for t in "${targets[@]}"; do
	corpus=build/fuzz-long/$t
	mkdir -p "$corpus"
	cp -n build/fuzz-long/seeds/"$t"/* "$corpus"/
	echo "== $t: ${secs}s from $(find "$corpus" -type f | wc -l) inputs"
	build/fuzz-hand/fuzz_"$t" -max_total_time="$secs" -timeout=20 \
		-rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="build/fuzz-long/$t-" "$corpus" \
		2>&1 | grep -E '^(stat::|#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY)' || true
	echo "corpus: $(find "$corpus" -type f | wc -l) inputs"
	# Line coverage of the code under test, from replaying the corpus.
	rm -f build/fuzz-long/"$t".profraw
	LLVM_PROFILE_FILE=build/fuzz-long/$t.profraw \
		build/fuzz-cov/fuzz_"$t" -runs=0 "$corpus" >/dev/null 2>&1 || true
	llvm-profdata merge -o build/fuzz-long/"$t".profdata \
		build/fuzz-long/"$t".profraw
	llvm-cov report build/fuzz-cov/fuzz_"$t" \
		-instr-profile=build/fuzz-long/"$t".profdata \
		-ignore-filename-regex='tests/|/usr/' | sed 's/^/    /'
done
