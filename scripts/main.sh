#!/usr/bin/env bash
# The README's main command: install what is missing, build, then take one spec through the
# pipeline as far as it exists today: verify and print it, print its normalized form, and
# evaluate it with the reference evaluator on seeded inputs (outputs in build/main-run/).
#   scripts/main.sh [SPEC]     (default: examples/causal_gqa.mlir)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
spec=${1:-$ATTNC_ROOT/examples/causal_gqa.mlir}
bin=$ATTNC_BUILD/bin
echo "== spec (verified): $spec"
"$bin/attnc-opt" "$spec"
echo "== normalized (attn-normalize)"
"$bin/attnc-opt" "$spec" --attn-normalize
echo "== reference evaluation (attnc-run --reference)"
"$bin/attnc-run" --reference "$spec" --batch 1 --seq-q 256 --seq-kv 256 -o "$ATTNC_BUILD/main-run"
