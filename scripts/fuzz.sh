#!/usr/bin/env bash
# Builds attnc's libFuzzer targets (test/fuzz) with clang-22 under ASan + UBSan in
# $ATTNC_FUZZ_BUILD (default build-fuzz/) and runs each for SECONDS (default 60) from its seed
# corpus: every spec under examples/ and test/ for attnc-spec-fuzzer, nothing for
# attnc-runtime-args-fuzzer. A crash, leak, sanitizer report or time-out stops the run, leaves
# the input in $ATTNC_FUZZ_BUILD/findings/ and fails. Called by scripts/test.sh with 60;
# longer runs: scripts/fuzz.sh 3600.
set -euo pipefail
seconds=${1:-60}
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
FUZZ_BUILD=${ATTNC_FUZZ_BUILD:-$ATTNC_ROOT/build-fuzz}

attnc_configure "$FUZZ_BUILD" -DATTNC_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang-$LLVM_VERSION -DCMAKE_CXX_COMPILER=clang++-$LLVM_VERSION
step "fuzz: building the fuzzers"
"$ATTNC_VENV/bin/cmake" --build "$FUZZ_BUILD" -j "${ATTNC_JOBS:-2}" \
  --target attnc-spec-fuzzer attnc-runtime-args-fuzzer

seeds=$FUZZ_BUILD/seeds/spec
rm -rf "$seeds" && mkdir -p "$seeds"
find "$ATTNC_ROOT/examples" "$ATTNC_ROOT/test" -name '*.mlir' -size -64k \
  -exec sh -c 'cp "$1" "$2/$(echo "$1" | md5sum | cut -c1-16).mlir"' _ {} "$seeds" \;
mkdir -p "$FUZZ_BUILD/findings" "$FUZZ_BUILD/seeds/runtime-args"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_fuzzer() { # NAME SEED-DIR
  local corpus=$FUZZ_BUILD/corpus/$1 log=$FUZZ_BUILD/findings/$1.log
  mkdir -p "$corpus"
  step "fuzz: $1 for $seconds s ($(ls "$2" | wc -l) seeds, $(ls "$corpus" | wc -l) in its corpus)"
  if ! "$FUZZ_BUILD/bin/$1" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/findings/$1-" "$corpus" "$2" \
      >"$log" 2>&1; then
    grep -E -A30 '==[0-9]+==ERROR|runtime error|ALARM|out-of-memory' "$log" | head -60
    step "fuzz: $1 found a problem (input in $FUZZ_BUILD/findings/, log $log)"
    return 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log"
}
run_fuzzer attnc-spec-fuzzer "$seeds"
run_fuzzer attnc-runtime-args-fuzzer "$FUZZ_BUILD/seeds/runtime-args"
step "fuzz: no findings"
