#!/usr/bin/env bash
# Builds attnc's libFuzzer targets (test/fuzz) with clang-22 in the ASan + UBSan build
# ($ATTNC_ASAN_BUILD, default build-fuzz/) and runs each for SECONDS (default 60) from its seed
# corpus: every spec under examples/ and test/ for attnc-spec-fuzzer, nothing for
# attnc-runtime-args-fuzzer and attnc-kernel-fuzzer (any bytes decode to a valid spec); the
# first two side by side. A crash, leak, sanitizer report, mismatch with the reference or
# time-out stops the run, leaves the input in $ATTNC_ASAN_BUILD/findings/ and fails. Called by scripts/test.sh with 60;
# longer runs: scripts/fuzz.sh 3600.
set -euo pipefail
seconds=${1:-60}
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
FUZZ_BUILD=$ATTNC_ASAN_BUILD

attnc_configure_sanitized "$FUZZ_BUILD" address,undefined -DATTNC_FUZZ=ON
step "fuzz: building the fuzzers"
"$ATTNC_VENV/bin/cmake" --build "$FUZZ_BUILD" -j "${ATTNC_JOBS:-2}" \
  --target attnc-spec-fuzzer attnc-runtime-args-fuzzer attnc-kernel-fuzzer

seeds=$FUZZ_BUILD/seeds/spec
rm -rf "$seeds" && mkdir -p "$seeds"
find "$ATTNC_ROOT/examples" "$ATTNC_ROOT/test" -name '*.mlir' -size -64k \
  -exec sh -c 'cp "$1" "$2/$(echo "$1" | md5sum | cut -c1-16).mlir"' _ {} "$seeds" \;
mkdir -p "$FUZZ_BUILD/findings" "$FUZZ_BUILD/seeds/runtime-args" "$FUZZ_BUILD/seeds/kernel"
# use_sigaltstack=0: see test/lit.cfg.py. verify_asan_link_order=0: -fsanitize=fuzzer puts
# libstdc++ ahead of the shared ASan runtime among a fuzzer's libraries, which ASan's start-up
# check refuses although the runtime is loaded before main either way.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:use_sigaltstack=0:verify_asan_link_order=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_fuzzer() { # NAME SEED-DIR [LIBFUZZER-FLAG...]
  local corpus=$FUZZ_BUILD/corpus/$1 log=$FUZZ_BUILD/findings/$1.log
  mkdir -p "$corpus"
  step "fuzz: $1 for $seconds s ($(ls "$2" | wc -l) seeds, $(ls "$corpus" | wc -l) in its corpus)"
  if ! "$FUZZ_BUILD/bin/$1" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/findings/$1-" "${@:3}" "$corpus" "$2" \
      >"$log" 2>&1; then
    grep -E -A30 '==[0-9]+==ERROR|runtime error|ALARM|out-of-memory|^attnc-kernel-fuzzer:' "$log" | head -60
    step "fuzz: $1 found a problem (input in $FUZZ_BUILD/findings/, log $log)"
    return 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log"
}
# Each fuzzer is one process on one core: the first two run side by side on the two cores,
# each for its full SECONDS.
run_fuzzer attnc-spec-fuzzer "$seeds" &
spec_pid=$!
status=0
run_fuzzer attnc-runtime-args-fuzzer "$FUZZ_BUILD/seeds/runtime-args" || status=1
wait "$spec_pid" || status=1
((status == 0)) || exit 1
# A few executions a second (each input is compiled at -O3 and linked): full-length inputs
# from the start (-len_control=0), so that specs are varied within a minute.
run_fuzzer attnc-kernel-fuzzer "$FUZZ_BUILD/seeds/kernel" -len_control=0 -max_len=256
step "fuzz: no findings"
