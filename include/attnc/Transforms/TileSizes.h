//===- TileSizes.h - default tile sizes of attn.flash -----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_TILESIZES_H
#define ATTNC_TRANSFORMS_TILESIZES_H

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// Keys per KV tile when none is chosen (attn-tile-flash's default and the
/// backends' block_kv default).
inline constexpr int64_t kDefaultBlockKv = 64;

/// How attn-tile-flash chooses the sizes a schedule leaves automatic, as plain
/// numbers: the backend's registry fills them in per target (lib/Target), so
/// the tiler itself knows no target. The defaults are the CPU kernels'.
struct TileRule {
  /// Query rows per tile for head_dim <= 128 and above: a tile's working set
  /// (block_q x head_dim accumulators) stays small for large heads.
  int64_t blockQ = 64, blockQLargeHead = 32;
  /// An automatic block_q larger than this is rounded down to a multiple of
  /// it (a CPU backend's register block rows: whole blocks per tile).
  int64_t blockQMultiple = 1;
  /// Keys per KV tile for 16-bit elements and for f32 (the CUDA tensor-core
  /// kernels take half the keys in f32: TF32 scores and P take twice the
  /// registers of 16-bit ones).
  int64_t blockKv = kDefaultBlockKv, blockKvF32 = kDefaultBlockKv;
  /// A CPU decode kernel that widens its f16 K and V tiles to f32 before
  /// using them (bf16 ones are read in place) keeps both widened tiles within
  /// this many bytes, a share of L1, by halving its automatic block_kv down
  /// to 16 (0: no bound).
  int64_t decodeWidenedBytes = 0;
};

/// What the automatic block_kv of a decode kernel (num_splits) depends on.
struct DecodeTile {
  int64_t headDim;
  bool bf16;
};

/// block_q as asked for, or the rule's when 0 ("auto").
inline int64_t resolveBlockQ(int64_t requested, int64_t headDim, const TileRule &rule) {
  if (requested)
    return requested;
  int64_t automatic = headDim > 128 ? rule.blockQLargeHead : rule.blockQ;
  int64_t multiple = rule.blockQMultiple;
  return automatic < multiple ? automatic : automatic - automatic % multiple;
}

/// block_kv as asked for, or the rule's for the element size when 0 ("auto").
inline int64_t resolveBlockKv(int64_t requested, int64_t elemBytes, const TileRule &rule,
                              std::optional<DecodeTile> decode = std::nullopt) {
  if (requested)
    return requested;
  int64_t kv = elemBytes == 4 ? rule.blockKvF32 : rule.blockKv;
  if (!decode || elemBytes != 2 || decode->bf16 || !rule.decodeWidenedBytes)
    return kv;
  int64_t padded = (decode->headDim + 15) / 16 * 16;
  while (kv > 16 && 2 * kv * padded * 4 > rule.decodeWidenedBytes)
    kv /= 2;
  return kv;
}

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_TILESIZES_H
