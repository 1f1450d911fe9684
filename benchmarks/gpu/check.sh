#!/bin/bash
# The GPU check as one command for a lent GPU machine (the device tool: `run` with
# carry ["benchmarks/gpu/bundle.tar.xz"], after prepare.py here). Arguments go to run.py.
# Everything lands under $OUT: log.txt, report.md, results.json, the per-item .jsonl files
# and compute-sanitizer's report of the first failures.
set -o pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} 2>&1 | tee "$out/log.txt"
PYTHONUNBUFFERED=1 python3 "$(dirname "$0")/run.py" --out "$out" "$@" 2>&1 | tee -a "$out/log.txt"
status=$?
cat "$out/report.md" 2>/dev/null
exit $status
