//===- Varlen.h - packed variable-length sequences --------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A varlen kernel (varlen = cu_seqlens) takes a batch of sequences packed
// end to end: q and out [total_q, heads, head_dim], k and v [total_kv,
// kv_heads, head_dim], delimited by int32 offsets cu_seqlens_q and
// cu_seqlens_kv [batch + 1]. The tools keep the usual padded tensors (bshd
// [batch, seq, heads, head_dim]) with each sequence's lengths, pack them for
// the kernel and unpack its outputs, so the reference and the comparison
// stay those of a padded batch: each sequence evaluated alone on its first
// lengths (evaluateWithLengths), rows past a sequence's end out 0, lse -inf.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_VARLEN_H
#define ATTNC_REFERENCE_VARLEN_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace attnc {

struct Varlen {
  std::vector<int32_t> qLens, kvLens; // [batch]; empty: not a varlen kernel
  /// kv_cache = lengths: the keys each sequence uses, each <= kvLens[b]
  /// (FlashAttention's seqused_k); empty otherwise.
  std::vector<int32_t> kvUsed;
  bool active() const { return !qLens.empty() || !kvLens.empty(); }
  /// Offsets [batch + 1] of sequences of these lengths packed end to end.
  static std::vector<int32_t> offsets(llvm::ArrayRef<int32_t> lens);
};

/// The lengths `text` gives a varlen kernel ("" = every sequence seq_q and
/// seq_kv long, "random" = seeded lengths in [0, seq_q] and [0, seq_kv], or
/// "Q:KV" per sequence, comma-separated); an empty Varlen for other kernels.
/// With kv_cache = lengths, `usedText` gives the keys each uses ("" = all,
/// "random" = seeded in [0, its KV length], or one count per sequence).
llvm::Expected<Varlen> makeVarlen(mlir::attn::AttentionSpecOpInterface op, int64_t batch,
                                  int64_t seqQ, int64_t seqKv, llvm::StringRef text,
                                  llvm::StringRef usedText, uint64_t seed);

/// Sequence b's first lens[b] rows of `padded` (bshd [batch, seq, heads,
/// dim]) end to end: [total, heads, dim].
HostTensor packSequences(const HostTensor &padded, llvm::ArrayRef<int32_t> lens);

/// The inverse, [batch, seq, heads, dim]: rows past a sequence's end 0.
HostTensor unpackSequences(const HostTensor &packed, llvm::ArrayRef<int32_t> lens, int64_t seq);

/// A varlen lse [heads, total_q] as [batch, heads, seq_q]: -inf past a
/// sequence's end.
HostTensor unpackLse(const HostTensor &packed, llvm::ArrayRef<int32_t> lens, int64_t seqQ);

} // namespace attnc

#endif // ATTNC_REFERENCE_VARLEN_H
