#!/usr/bin/env bash
# The README's main command: install what is missing, build, then take one spec all the way:
# print its normalized form, compile it to an object + header and to a shared object, run
# the compiled kernel on seeded inputs and compare it with the reference evaluator, printing
# the error, time, GFLOPS and % of the machine's FMA peak. Outputs go to build/main-run/.
#   scripts/main.sh [SPEC] [SEQ]     (default: examples/causal_gqa.mlir, 1024)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
spec=${1:-$ATTNC_ROOT/examples/causal_gqa.mlir}
seq=${2:-1024}
bin=$ATTNC_BUILD/bin
out=$ATTNC_BUILD/main-run
mkdir -p "$out"
name=$(basename "$spec" .mlir)
echo "== normalized spec: $spec"
"$bin/attnc-opt" "$spec" --attn-normalize
echo "== attnc explain (seq $seq)"
"$bin/attnc" explain "$spec" --seq-q "$seq" --seq-kv "$seq"
echo "== compile: $out/$name.o + $out/$name.h, and $out/$name.so"
start=$(date +%s%N)
"$bin/attnc" "$spec" --target host -o "$out/$name.o"
echo "compile time: $((($(date +%s%N) - start) / 1000000)) ms"
"$bin/attnc" "$spec" --target host --emit=so -o "$out/$name.so"
echo "== run the compiled kernel and compare with the reference (attnc-run --so)"
"$bin/attnc-run" "$spec" --so "$out/$name.so" --seq-q "$seq" --seq-kv "$seq"
