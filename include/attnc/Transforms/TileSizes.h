//===- TileSizes.h - default tile sizes of attn.flash -----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_TILESIZES_H
#define ATTNC_TRANSFORMS_TILESIZES_H

#include <cstdint>

namespace mlir::attn {

/// Keys per KV tile when none is chosen (attn-tile-flash's default and the
/// backends' block_kv default).
inline constexpr int64_t kDefaultBlockKv = 64;

/// Query rows per tile when none is chosen: smaller for large heads so a
/// tile's working set (block_q x head_dim accumulators) stays small. On a GPU
/// (the Halide GPU schedule) a tile is a block whose state sits in shared
/// memory: fewer rows.
int64_t defaultBlockQ(int64_t headDim, bool gpu);

/// Keys per KV tile when none is chosen: kDefaultBlockKv, except for the
/// CUDA tensor-core kernels' f32 (TF32) tiles, whose scores and P are twice
/// the registers of 16-bit ones: half as many keys.
inline int64_t defaultBlockKv(int64_t elemBytes, bool tensorCores) {
  return tensorCores && elemBytes == 4 ? kDefaultBlockKv / 2 : kDefaultBlockKv;
}

/// block_kv as asked for, or its default when 0 ("auto").
inline int64_t resolveBlockKv(int64_t requested, int64_t elemBytes, bool tensorCores) {
  return requested ? requested : defaultBlockKv(elemBytes, tensorCores);
}

/// block_q as asked for, or its default when 0 ("auto").
/// `multiple`: the query rows of the backend's register blocks; an automatic
/// block_q that is not a whole number of them is rounded down to one (48 for
/// AVX2's 24-row blocks) unless it is smaller than one block.
inline int64_t resolveBlockQ(int64_t requested, int64_t headDim, bool gpu,
                             int64_t multiple = 1) {
  if (requested)
    return requested;
  int64_t automatic = defaultBlockQ(headDim, gpu);
  return automatic < multiple ? automatic : automatic - automatic % multiple;
}

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_TILESIZES_H
