#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test (lit suite through ctest).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
t0=$SECONDS
"$ATTNC_VENV/bin/ctest" --test-dir "$ATTNC_BUILD" --output-on-failure -V
step "tests took $((SECONDS - t0)) s"
