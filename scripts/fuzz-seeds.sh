#!/usr/bin/env bash
# Writes the fuzzers' seed corpora into DIR (scripts/fuzz.sh): spec/ and driver/ hold every spec
# under examples/ and test/ and each MLIR stage attnc prints for it (--emit=normalized, tiled,
# loops: the forms the tools must take, not only the ones users write); driver/ also holds
# examples with a q .npy and a tuning DB appended (DriverFuzzer.cpp's sections); npy/ the .npy
# files attnc-run writes (f32, f16, bf16); tuning-db/ one entry of each benchmark DB and the
# tests' DBs; empty/ nothing. Needs the main build (attnc, attnc-run).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" >/dev/null
dir=$1 attnc=$ATTNC_BUILD/bin/attnc run=$ATTNC_BUILD/bin/attnc-run
rm -rf "$dir" && mkdir -p "$dir"/{spec,driver,npy,tuning-db,empty,scratch}
# Specs and their stages, named by a hash of the path (and stage); stages that fail are skipped.
find "$ATTNC_ROOT/examples" "$ATTNC_ROOT/test" -name '*.mlir' -size -64k -print0 |
  xargs -0 -P "${ATTNC_JOBS:-2}" -I{} sh -c '
    name=$(echo "$1" | md5sum | cut -c1-16)
    cp "$1" "$2/spec/$name.mlir"
    for stage in normalized tiled loops; do
      "$3" "$1" --target x86-64-avx2 --emit=$stage -o "$2/spec/$name-$stage.mlir" \
        >/dev/null 2>&1 || rm -f "$2/spec/$name-$stage.mlir"
    done' _ {} "$dir" "$attnc"
find "$dir/spec" -size +64k -delete
cp "$dir"/spec/* "$dir/driver/"
# A DB of one entry and its first candidates: the benchmark DBs are 0.3-0.5 MB.
for db in "$ATTNC_ROOT"/benchmarks/tuning/*.json; do
  "$ATTNC_VENV/bin/python" - "$db" "$dir/tuning-db/$(basename "$db")" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
db["entries"] = db["entries"][:1]
for entry in db["entries"]:
    entry["candidates"] = entry["candidates"][:4]
json.dump(db, open(sys.argv[2], "w"), indent=1)
PY
done
cp "$ATTNC_ROOT"/test/tools/attnc-tune/Inputs/*.json "$dir/tuning-db/"
# q, k, v, out, lse of specs in each dtype, and the driver's spec + .npy + DB seeds.
for spec in examples/causal_gqa.mlir examples/cuda_causal_gqa_bf16.mlir \
    benchmarks/tuning/dense_d64.mlir test/tools/attnc-tune/Inputs/small.mlir; do
  name=$(basename "$spec" .mlir)
  work=$dir/scratch/$name
  "$run" "$ATTNC_ROOT/$spec" --reference --batch 1 --seq-q 5 --seq-kv 7 -o "$work" >/dev/null
  for f in "$work"/*.npy; do cp "$f" "$dir/npy/$name-$(basename "$f")"; done
  { cat "$ATTNC_ROOT/$spec"; printf '\n//--- npy\n'; cat "$work/q.npy"
    printf '\n//--- db\n'; cat "$dir/tuning-db/$(ls "$dir/tuning-db" | head -1)"; } \
    >"$dir/driver/$name-npy-db.mlir"
done
{ cat "$ATTNC_ROOT/benchmarks/tuning/dense_d64.mlir"; printf '\n//--- db\n'
  cat "$dir/tuning-db/dense_d64.json"; } >"$dir/driver/dense_d64-tuned.mlir"
rm -rf "$dir/scratch"
