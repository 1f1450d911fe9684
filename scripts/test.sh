#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test (lit suite and unit
# tests through ctest), then a bounded run of each fuzzer (scripts/fuzz.sh: 40 s each, two at a
# time; ATTNC_FUZZ_SECONDS changes it), and end with what the suite did not run on this machine.
# ATTNC_SANITIZE_SUITE=1 adds scripts/sanitize.sh (the whole suite under ASan + UBSan and the
# runtime under TSan, about 13 minutes more).
#
#   scripts/test.sh           the full suite (CI: .ci/run)
#   scripts/test.sh --quick   the quick tier, for the edit-build-test loop: the unit tests and
#                             the lit tests of the dialect, transforms, conversions, reference
#                             and tools, and one small numeric case per backend and target
#                             that runs here (test/Target/quick-numerics.test); no fuzzing
#
# Kernels come from the kernel cache (attnc --kernel-cache) in ATTNC_KERNEL_CACHE, by default
# ~/.cache/attnc/kernels: a kernel the same compiler sources already built is not compiled
# again. ATTNC_KERNEL_CACHE= (empty) compiles every kernel.
set -euo pipefail
quick=0
case ${1:-} in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
export ATTNC_KERNEL_CACHE=${ATTNC_KERNEL_CACHE-$HOME/.cache/attnc/kernels}
if [[ -n $ATTNC_KERNEL_CACHE ]]; then
  mkdir -p "$ATTNC_KERNEL_CACHE"
  # Entries unused for two weeks go (a hit refreshes an entry's time): old compilers' kernels.
  find "$ATTNC_KERNEL_CACHE" -type f -mtime +14 -delete
fi
lit_dir=/usr/lib/llvm-$LLVM_VERSION/utils/lit
not_run() {
  /usr/bin/python3 "$ATTNC_ROOT/test/not_run.py" --features "$ATTNC_BUILD/test/lit-features.txt" \
    --lit-dir "$lit_dir" "$ATTNC_ROOT/test"
}
t0=$SECONDS
if ((quick)); then
  "$ATTNC_VENV/bin/ctest" --test-dir "$ATTNC_BUILD" --output-on-failure -E '^lit$'
  # The quick tier, by path: everything but the per-target matrices, the CMake consumers, the
  # toolchain and benchmark checks and the 10,000-kernel spec (tools/attnc/many-kernels.test).
  "/usr/lib/llvm-$LLVM_VERSION/bin/lit" -sv "$ATTNC_BUILD/test" \
    --filter ':: ((Dialect|Transforms|Conversion|Reference|Halide|tools|python)/|(docs|examples)\.test|Target/quick-numerics\.test)' \
    --filter-out 'many-kernels\.test'
  step "quick tier took $((SECONDS - t0)) s"
  not_run
  exit 0
fi
"$ATTNC_VENV/bin/ctest" --test-dir "$ATTNC_BUILD" --output-on-failure -V
step "tests took $((SECONDS - t0)) s"
t0=$SECONDS
bash "$ATTNC_ROOT/scripts/fuzz.sh" "${ATTNC_FUZZ_SECONDS:-40}"
step "fuzzing took $((SECONDS - t0)) s"
if [[ ${ATTNC_SANITIZE_SUITE:-0} == 1 ]]; then
  t0=$SECONDS
  bash "$ATTNC_ROOT/scripts/sanitize.sh"
  step "the sanitizer suite took $((SECONDS - t0)) s"
fi
not_run
