#!/usr/bin/env bash
# Runs today's fuzzers against an older commit's sources, until each first finding or SECONDS:
# how long a fuzzer takes to find a bug a commit fixed (docs/Reliability.md). The commit goes
# into a worktree (build/fuzz-at-COMMIT/src) with test/fuzz/ copied from this checkout, builds
# there in ASan + UBSan (the same flags as build-fuzz/), and each FUZZER runs from this
# checkout's seeds (scripts/fuzz-seeds.sh), one at a time.
#
#   scripts/fuzz-at.sh COMMIT SECONDS FUZZER...
#   scripts/fuzz-at.sh b4b65bc 3600 attnc-driver-fuzzer attnc-npy-fuzzer attnc-tuning-db-fuzzer
set -euo pipefail
(($# >= 3)) || { echo "usage: scripts/fuzz-at.sh COMMIT SECONDS FUZZER..." >&2; exit 2; }
commit=$1 seconds=$2
shift 2
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
here=$ATTNC_ROOT work=$ATTNC_BUILD/fuzz-at-$commit
[[ -d $work/src ]] || git -C "$here" worktree add --detach "$work/src" "$commit"
cp "$here"/test/fuzz/* "$work/src/test/fuzz/"
# The old tree's own setup.sh configures, with this checkout's venv and main build (unused).
(ATTNC_VENV=$ATTNC_VENV ATTNC_BUILD=$ATTNC_BUILD; source "$work/src/scripts/setup.sh"
 attnc_configure_sanitized "$work/build" address,undefined -DATTNC_FUZZ=ON
 "$ATTNC_VENV/bin/cmake" --build "$work/build" -j "${ATTNC_JOBS:-2}" --target "$@")
bash "$here/scripts/fuzz-seeds.sh" "$work/seeds"
attnc_fuzz_env
declare -A seeds=([attnc-spec-fuzzer]=spec [attnc-driver-fuzzer]=driver [attnc-npy-fuzzer]=npy
                  [attnc-tuning-db-fuzzer]=tuning-db)
for fuzzer in "$@"; do
  corpus=$work/corpus/$fuzzer log=$work/$fuzzer.log
  rm -rf "$corpus" && mkdir -p "$corpus" "$work/findings"
  t0=$EPOCHREALTIME
  if "$work/build/bin/$fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -artifact_prefix="$work/findings/$fuzzer-" "$corpus" "$work/seeds/${seeds[$fuzzer]:-empty}" \
      >"$log" 2>&1; then
    step "$fuzzer: no finding in $seconds s"
  else
    took=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
    step "$fuzzer: first finding after $took s: $(grep -m1 -E '==[0-9]+==ERROR|runtime error|out-of-memory|^attnc-[a-z-]+-fuzzer:|deadly signal' "$log")"
    grep -m1 -E "^#[0-9]+" "$log" || true
  fi
done
