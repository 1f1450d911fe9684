#!/usr/bin/env bash
# The sanitizer suite. 1. The whole test suite (lit and the unit tests, through ctest) on the
# ASan + UBSan build ($ATTNC_ASAN_BUILD, default build-fuzz/, shared with scripts/fuzz.sh):
# every tool and the runtime instrumented, every report fatal, leaks reported; the tests that
# load kernels into Python preload the sanitizer runtime and the CMake consumers build with
# the instrumented package (test/lit.cfg.py). 2. The runtime under TSan (build-tsan/): its
# unit tests, which launch on the thread pool from 1 to 64 threads, from concurrent callers,
# from inside a kernel and after fork. Called by scripts/test.sh when ATTNC_SANITIZE_SUITE=1
# (CI does not: it would take CI to about 30 minutes); docs/Testing.md (Sanitizers) records
# the last result. The kernel cache is off: the instrumented compiler must compile every kernel.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
export ATTNC_KERNEL_CACHE=
TSAN_BUILD=${ATTNC_TSAN_BUILD:-$ATTNC_ROOT/build-tsan}

attnc_configure_sanitized "$ATTNC_ASAN_BUILD" address,undefined -DATTNC_FUZZ=ON
step "sanitize: building everything under ASan + UBSan in $ATTNC_ASAN_BUILD"
"$ATTNC_VENV/bin/cmake" --build "$ATTNC_ASAN_BUILD" -j "${ATTNC_JOBS:-2}"
t0=$SECONDS
"$ATTNC_VENV/bin/ctest" --test-dir "$ATTNC_ASAN_BUILD" --output-on-failure
step "sanitize: the suite passed under ASan + UBSan in $((SECONDS - t0)) s"

attnc_configure_sanitized "$TSAN_BUILD" thread
step "sanitize: building the runtime's tests under TSan in $TSAN_BUILD"
"$ATTNC_VENV/bin/cmake" --build "$TSAN_BUILD" -j "${ATTNC_JOBS:-2}" --target attnc-runtime-tests
# die_after_fork=0: the fork test starts the child's pool after a multi-threaded fork, which
# TSan otherwise refuses outright (it cannot vouch for the child's copied state).
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
  "$TSAN_BUILD/bin/attnc-runtime-tests"
step "sanitize: the runtime's tests passed under TSan"
