//===- AttnDialect.h - the attn dialect, its enums and mask attributes ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTN_ATTNDIALECT_H
#define ATTNC_DIALECT_ATTN_ATTNDIALECT_H

#include "attnc/Support/MaskRules.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include <cstdint>
#include <limits>

namespace mlir::attn {
/// A sliding-window bound meaning "no bound"; printed and parsed as `inf`.
/// The same value as the mask rules' own, which interpret the bound.
inline constexpr int64_t kUnbounded = ::attnc::mask::kUnbounded;
/// Largest seq_q * seq_kv for which a kernel may return the attention weights.
inline constexpr int64_t kMaxWeightsElements = int64_t(1) << 24;
/// A backward kernel's KV chunks (attn.flash_backward's kv_chunks): each is
/// a work item per (batch, KV head) and an f32 dq partial as large as dq.
inline constexpr int64_t kMaxKvChunks = 64;
inline constexpr int64_t kDefaultKvChunks = 4;

/// A split-KV decode kernel (num_splits): at most this many KV ranges, and
/// query rows (query heads of a group x seq_q) and rows x head_dim computed
/// together; seq_q's bound when max_seq does not give one.
inline constexpr int64_t kMaxNumSplits = 256;
inline constexpr int64_t kMaxDecodeRows = 256;
inline constexpr int64_t kMaxDecodeElements = int64_t(1) << 16;
inline constexpr int64_t kDecodeDefaultMaxSeqQ = 16;
/// kv_cache = paged<N>: at most this many tokens per page (vLLM's block sizes
/// go to 128, FlashInfer's to 256).
inline constexpr int64_t kMaxPageSize = 256;
/// num_splits = 0 (auto): at most this many ranges of at least this many keys.
inline constexpr int64_t kAutoSplits = 16;
inline constexpr int64_t kAutoSplitMinKeys = 2048;

/// A decode kernel's splits per (batch, KV head) for its num_splits (0: auto).
inline int64_t decodeSplitCount(uint64_t numSplits) {
  return numSplits ? int64_t(numSplits) : kAutoSplits;
}

/// The fewest whole KV tiles of `blockKv` keys in one split: auto keeps short
/// caches to few splits (kAutoSplitMinKeys keys each); a given num_splits, 1.
inline int64_t decodeMinTiles(uint64_t numSplits, int64_t blockKv) {
  return numSplits ? 1 : (kAutoSplitMinKeys + blockKv - 1) / blockKv;
}

/// The bound on seq_q of a decode kernel: max_seq's, or the default.
inline int64_t decodeMaxSeqQ(std::optional<llvm::ArrayRef<int64_t>> maxSeq) {
  return maxSeq && maxSeq->size() == 2 && (*maxSeq)[0] > 0 ? (*maxSeq)[0]
                                                           : kDecodeDefaultMaxSeqQ;
}

/// KV heads one decode work item computes together: where a key's heads lie
/// side by side (a paged cache, bshd), all of them (the fewest that divide
/// kvHeads and fit the row bounds), so that an item reads whole lines of each
/// key's heads instead of one head's rows a few KiB apart, which the hardware
/// prefetchers do not follow; one for head-major caches (bhsd).
inline int64_t decodeKvHeadsPerItem(bool tokenMajor, int64_t kvHeads, int64_t group,
                                    int64_t maxSeqQ, int64_t dim) {
  int64_t padded = (dim + 15) / 16 * 16, best = 1;
  for (int64_t n = 1; tokenMajor && n <= kvHeads; ++n) {
    int64_t rows = n * group * maxSeqQ;
    if (kvHeads % n == 0 && rows <= kMaxDecodeRows && rows * padded <= kMaxDecodeElements)
      best = n;
  }
  return best;
}
} // namespace mlir::attn

#include "Attn/AttnDialect.h.inc"
#include "Attn/AttnEnums.h.inc"
#include "Attn/AttnAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Attn/AttnAttrs.h.inc"

#endif // ATTNC_DIALECT_ATTN_ATTNDIALECT_H
