//===- CpuTunables.cpp - the MLIR CPU backend's tunables ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The ranges keep a tile's stack buffers (Q^T, V, S^T and the accumulators:
// at most 1.5 MiB at head_dim 256) well inside a thread's 8 MiB stack, and the
// register block inside the 16 / 32 vector registers; unrolling past 4 steps
// only grows the code (2 already removes most of the loop's own overhead).
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/CPU/CpuTunables.h"

#include "attnc/Transforms/TileSizes.h"

using namespace attnc;

static const llvm::StringRef kSoftmaxPlaces[] = {"fused", "pass"};

/// The rows per chunk of a causal linear attention (attn.linear_attention's
/// `chunk`, which the schedule's value replaces).
Tunable attnc::linearChunkTunable() {
  Tunable t{"chunk", 0, 32, 128, false,
            "rows per chunk of a causal linear attention (attn.linear_attention chunk)",
            "the spec's chunk, 64 where it gives none"};
  t.powerOfTwo = true;
  t.family = "linear attention";
  return t;
}

llvm::ArrayRef<Tunable> attnc::cpuTunables() {
  static const Tunable tunables[] = {
      {"block_q", 0, 8, 256, true,
       "query rows per tile = per work item (attn.flash block_q)",
       "64, or 32 for head_dim > 128, rounded down to whole register blocks: 48 with 16 "
       "vector registers"},
      {"block_kv", 0, 8, 512, true, "keys per KV tile (attn.flash block_kv)",
       "64; a decode kernel over f16 K and V (widened to f32 per tile): as many keys as keep "
       "both widened tiles in 32 KiB (32 at head_dim 128)"},
      {"qk_keys", 0, 1, 8, false, "keys per Q K^T register block", "4"},
      {"qk_row_vectors", 0, 1, 8, false,
       "vectors of query rows per Q K^T register block (capped to divide block_q)",
       "4 with 32 vector registers, 3 with 16"},
      {"pv_rows", 0, 1, 8, false,
       "query rows per P V register block (capped to divide block_q)",
       "4 with 32 vector registers, 6 with 16"},
      {"pv_vectors", 0, 1, 8, false,
       "vectors of head_dim per P V register block (capped to divide head_dim)",
       "4 with 32 vector registers, 2 with 16"},
      {"unroll", 0, 1, 4, false,
       "steps of the Q K^T (head_dim) and P V (keys) loops per loop iteration",
       "2 on AVX2, 1 elsewhere"},
      {"softmax", 0, 0, 1, false,
       "where full tiles take the softmax: in the Q K^T register blocks against the running "
       "max (fused), or in a pass over each tile's scores (pass)",
       "", kSoftmaxPlaces},
      linearChunkTunable(),
  };
  return tunables;
}
