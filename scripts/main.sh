#!/usr/bin/env bash
# The README's main command: install what is missing, build, then take one spec through the
# pipeline as far as it exists today: verify and print it, then print its normalized form.
#   scripts/main.sh [SPEC]     (default: examples/causal_gqa.mlir)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
spec=${1:-$ATTNC_ROOT/examples/causal_gqa.mlir}
opt=$ATTNC_BUILD/bin/attnc-opt
echo "== spec (verified): $spec"
"$opt" "$spec"
echo "== normalized (attn-normalize)"
"$opt" "$spec" --attn-normalize
