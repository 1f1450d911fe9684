#!/usr/bin/env bash
# Builds attnc's libFuzzer targets (test/fuzz) with clang-22 in the ASan + UBSan build
# ($ATTNC_ASAN_BUILD, default build-fuzz/) and runs each for SECONDS (default 60), two side by
# side (one per core, the next as soon as one ends), from its seed corpus:
#   attnc-spec-fuzzer, attnc-driver-fuzzer: every spec under examples/ and test/ and every MLIR
#     stage attnc --emit prints for it (normalized, tiled, loops); the driver's seeds also with
#     a q .npy and a tuning DB appended (test/fuzz/DriverFuzzer.cpp);
#   attnc-npy-fuzzer: the .npy files attnc-run writes; attnc-tuning-db-fuzzer: attnc-tune's DBs
#     (one entry of a benchmark DB) and the tests' hostile ones;
#   attnc-runtime-args-fuzzer, attnc-kernel-fuzzer: nothing (any bytes decode to a valid input).
# A crash, leak, sanitizer report, failed check or time-out stops the run, leaves the input in
# $ATTNC_ASAN_BUILD/findings/ and fails. Called by scripts/test.sh with 40 (about 2 min);
# longer runs: scripts/fuzz.sh 600 (30 min).
set -euo pipefail
seconds=${1:-60}
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
FUZZ_BUILD=$ATTNC_ASAN_BUILD

attnc_configure_sanitized "$FUZZ_BUILD" address,undefined -DATTNC_FUZZ=ON
step "fuzz: building the fuzzers"
fuzzers=(attnc-spec-fuzzer attnc-runtime-args-fuzzer attnc-driver-fuzzer attnc-kernel-fuzzer
         attnc-npy-fuzzer attnc-tuning-db-fuzzer)
"$ATTNC_VENV/bin/cmake" --build "$FUZZ_BUILD" -j "${ATTNC_JOBS:-2}" --target "${fuzzers[@]}"

step "fuzz: writing the seed corpora"
bash "$ATTNC_ROOT/scripts/fuzz-seeds.sh" "$FUZZ_BUILD/seeds"
mkdir -p "$FUZZ_BUILD/findings"
attnc_fuzz_env
run_fuzzer() { # NAME SEED-DIR [LIBFUZZER-FLAG...]
  local corpus=$FUZZ_BUILD/corpus/$1 log=$FUZZ_BUILD/findings/$1.log
  mkdir -p "$corpus"
  step "fuzz: $1 for $seconds s ($(ls "$2" | wc -l) seeds, $(ls "$corpus" | wc -l) in its corpus)"
  if ! "$FUZZ_BUILD/bin/$1" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/findings/$1-" "${@:3}" "$corpus" "$2" \
      >"$log" 2>&1; then
    grep -E -A30 '==[0-9]+==ERROR|runtime error|ALARM|out-of-memory|^attnc-[a-z-]+-fuzzer:' "$log" | head -60
    step "fuzz: $1 found a problem (input in $FUZZ_BUILD/findings/, log $log)"
    return 1
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log" |
    sed "s/^/$1: /"  # two run at a time: say whose
}
# Each fuzzer is one process on one core: two run at a time, each for its full SECONDS, and the
# next starts as soon as either ends (fixed pairs left a core idle while the spec fuzzer's seed
# pass, about twice SECONDS under ASan, ran on). Longest first. The kernel fuzzer compiles and
# links each input at -O3 (a few a second): full-length inputs from the start (-len_control=0),
# so that specs are varied within a minute.
seeds=$FUZZ_BUILD/seeds
jobs=("attnc-spec-fuzzer $seeds/spec" "attnc-driver-fuzzer $seeds/driver"
      "attnc-kernel-fuzzer $seeds/empty -len_control=0 -max_len=256"
      "attnc-runtime-args-fuzzer $seeds/empty" "attnc-npy-fuzzer $seeds/npy"
      "attnc-tuning-db-fuzzer $seeds/tuning-db")
status=0 running=0
for job in "${jobs[@]}"; do
  if ((running == 2)); then
    wait -n || status=1
    running=1
    ((status == 0)) || break  # a finding: start no more
  fi
  run_fuzzer $job &  # split into NAME SEED-DIR FLAG...
  running=$((running + 1))
done
while ((running)); do
  wait -n || status=1
  running=$((running - 1))
done
((status == 0)) || exit 1
step "fuzz: no findings"
