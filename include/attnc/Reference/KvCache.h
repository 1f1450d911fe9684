//===- KvCache.h - per-sequence lengths and paged KV caches -----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A decode kernel with `kv_cache` takes each sequence's KV length (kv_lens)
// and, paged, its keys and values in pages named by a block table. The
// tools build such inputs from the usual contiguous k and v (the pages in a
// seeded random order, as a serving cache's allocator leaves them), and the
// reference evaluates them as one spec call per sequence on its first
// kv_lens[b] keys: the definition of what a paged kernel computes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_KVCACHE_H
#define ATTNC_REFERENCE_KVCACHE_H

#include "attnc/Reference/Evaluator.h"

#include <random>

namespace attnc {

struct KvCache {
  int64_t pageSize = -1;       // -1: none; 0: lengths only; > 0: paged
  std::vector<int32_t> lens;   // [batch]
  std::vector<int32_t> table;  // [batch, maxPages], paged only
  int64_t maxPages = 0, numPages = 0;
};

/// Lengths for `batch` sequences from `lensText` ("" = every one seqKv,
/// "random" = drawn from `random` in [0, seqKv], or one number per sequence).
llvm::Expected<std::vector<int32_t>> parseLengths(llvm::StringRef lensText, int64_t batch,
                                                 int64_t seqKv, std::mt19937_64 &random);

/// The lengths `lensText` gives ("" = every sequence seq_kv long, "random" =
/// seeded lengths in [0, seq_kv], or one number per sequence) for op's
/// kv_cache, and with pages a table of ceil(seq_kv / page_size) pages per
/// sequence in a seeded random permutation of all of them.
llvm::Expected<KvCache> makeKvCache(mlir::attn::AttentionSpecOpInterface op, int64_t batch,
                                    int64_t seqKv, llvm::StringRef lensText, uint64_t seed);

/// k or v (the spec's layout, [batch, ...seq_kv...]) as the pages
/// [num_pages, page_size, kv_heads, head_dim] that `cache.table` names; keys
/// past a sequence's end stay 0.
HostTensor toPages(mlir::attn::AttentionSpecOpInterface op, const HostTensor &kv,
                   const KvCache &cache);

/// The reference with per-sequence lengths: each sequence b evaluated alone
/// (mods see its index b) on its first lens[b] keys and, when qLens is given
/// (varlen), its first qLens[b] queries; rows with no key or past the
/// sequence's queries: out 0, lse -inf. The mods' `inputs` are the whole
/// batch's, shaped as a kernel's are: for a KV cache by its capacity (k's
/// length), for packed sequences (qLens given) by the longest of qLens and of
/// `spans` (each sequence's keys in k and v; `lens` when empty).
llvm::Expected<ReferenceResult>
evaluateWithLengths(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                    const HostTensor &k, const HostTensor &v, llvm::ArrayRef<int32_t> lens,
                    llvm::ArrayRef<int32_t> qLens = {}, const ModInputs *inputs = nullptr,
                    llvm::ArrayRef<int32_t> spans = {});

} // namespace attnc

#endif // ATTNC_REFERENCE_KVCACHE_H
