#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test (lit suite and unit
# tests through ctest), then a bounded run of each fuzzer (scripts/fuzz.sh, 60 s each; set
# ATTNC_FUZZ_SECONDS to change it). ATTNC_SANITIZE_SUITE=1 adds scripts/sanitize.sh (the
# whole suite under ASan + UBSan and the runtime under TSan, about 13 minutes more).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
t0=$SECONDS
"$ATTNC_VENV/bin/ctest" --test-dir "$ATTNC_BUILD" --output-on-failure -V
step "tests took $((SECONDS - t0)) s"
t0=$SECONDS
bash "$ATTNC_ROOT/scripts/fuzz.sh" "${ATTNC_FUZZ_SECONDS:-60}"
step "fuzzing took $((SECONDS - t0)) s"
if [[ ${ATTNC_SANITIZE_SUITE:-0} == 1 ]]; then
  t0=$SECONDS
  bash "$ATTNC_ROOT/scripts/sanitize.sh"
  step "the sanitizer suite took $((SECONDS - t0)) s"
fi
