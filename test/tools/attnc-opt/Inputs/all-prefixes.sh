#!/usr/bin/env bash
# all-prefixes.sh TOOL FILE STEP: feeds every STEP-th prefix of FILE to TOOL on stdin and
# fails if TOOL ever exits with anything but 0 (a complete prefix) or 1 (a diagnostic),
# e.g. on a crash or an assertion.
set -u
tool=$1 file=$2 step=$3
size=$(wc -c <"$file")
for ((n = 1; n < size; n += step)); do
  head -c "$n" "$file" | "$tool" >/dev/null 2>&1
  rc=$?
  if ((rc > 1)); then
    echo "prefix of $n bytes of $file: $tool exited with $rc" >&2
    exit 1
  fi
done
echo "checked $(((size + step - 2) / step)) prefixes"
