//===- Varlen.cpp - packed variable-length sequences ----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/Varlen.h"

#include "EvalContext.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace attnc;
using namespace mlir::attn;
using attnc::detail::error;

std::vector<int32_t> Varlen::offsets(llvm::ArrayRef<int32_t> lens) {
  std::vector<int32_t> cu{0};
  for (int32_t n : lens)
    cu.push_back(cu.back() + n);
  return cu;
}

namespace {

/// "Q:KV" into its two lengths, within the padded ones.
llvm::Error parsePair(llvm::StringRef item, int64_t seqQ, int64_t seqKv, Varlen &out) {
  auto [q, kv] = item.trim().split(':');
  int64_t nq, nkv;
  if (q.getAsInteger(10, nq) || kv.getAsInteger(10, nkv) || nq < 0 || nq > seqQ || nkv < 0 ||
      nkv > seqKv)
    return error("--seq-lens: '" + item + "' is not Q:KV with Q in [0, seq_q = " +
                 llvm::Twine(seqQ) + "] and KV in [0, seq_kv = " + llvm::Twine(seqKv) + "]");
  out.qLens.push_back(int32_t(nq));
  out.kvLens.push_back(int32_t(nkv));
  return llvm::Error::success();
}

/// The sequences' lengths (makeVarlen's `text`).
llvm::Expected<Varlen> makeSpans(AttentionSpecOpInterface op, int64_t batch, int64_t seqQ,
                                 int64_t seqKv, llvm::StringRef text, uint64_t seed) {
  Varlen varlen;
  if (!op.getVarlen()) {
    if (!text.empty())
      return error("--seq-lens is for kernels with varlen = cu_seqlens (packed sequences)");
    return varlen;
  }
  // The packed totals are int32 offsets.
  if (batch * std::max(seqQ, seqKv) > std::numeric_limits<int32_t>::max())
    return error("batch x the longest sequence does not fit the int32 cu_seqlens");
  if (text.empty()) {
    varlen.qLens.assign(batch, int32_t(seqQ));
    varlen.kvLens.assign(batch, int32_t(seqKv));
    return varlen;
  }
  if (text == "random") {
    std::mt19937_64 random(seed + (1ULL << 43));
    for (int64_t b = 0; b < batch; ++b) {
      varlen.qLens.push_back(int32_t(random() % uint64_t(seqQ + 1)));
      varlen.kvLens.push_back(int32_t(random() % uint64_t(seqKv + 1)));
    }
    return varlen;
  }
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items)
    if (llvm::Error err = parsePair(item, seqQ, seqKv, varlen))
      return std::move(err);
  if (int64_t(varlen.qLens.size()) != batch)
    return error("--seq-lens gives " + llvm::Twine(varlen.qLens.size()) +
                 " sequences for batch " + llvm::Twine(batch));
  return varlen;
}

/// The keys each sequence uses of its KV length (kv_cache = lengths): all,
/// seeded in [0, its length] ("random"), or one count per sequence.
llvm::Error drawUsed(Varlen &varlen, llvm::StringRef text, uint64_t seed) {
  if (text.empty()) {
    varlen.kvUsed = varlen.kvLens;
    return llvm::Error::success();
  }
  if (text == "random") {
    std::mt19937_64 random(seed + (1ULL << 44));
    for (int32_t n : varlen.kvLens)
      varlen.kvUsed.push_back(int32_t(random() % uint64_t(n + 1)));
    return llvm::Error::success();
  }
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  if (items.size() != varlen.kvLens.size())
    return error("--kv-lens gives " + llvm::Twine(items.size()) + " lengths for " +
                 llvm::Twine(varlen.kvLens.size()) + " sequences");
  for (auto [item, span] : llvm::zip(items, varlen.kvLens)) {
    int64_t n;
    if (item.trim().getAsInteger(10, n) || n < 0 || n > span)
      return error("--kv-lens: '" + item + "' is not a count of keys in [0, " +
                   llvm::Twine(span) + "], the sequence's KV length");
    varlen.kvUsed.push_back(int32_t(n));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Varlen> attnc::makeVarlen(AttentionSpecOpInterface op, int64_t batch,
                                         int64_t seqQ, int64_t seqKv, llvm::StringRef text,
                                         llvm::StringRef usedText, uint64_t seed) {
  llvm::Expected<Varlen> varlen = makeSpans(op, batch, seqQ, seqKv, text, seed);
  if (!varlen || !op.getVarlen() || !op.getPageSize())
    return varlen;
  if (llvm::Error err = drawUsed(*varlen, usedText, seed))
    return std::move(err);
  return varlen;
}

HostTensor attnc::packSequences(const HostTensor &padded, llvm::ArrayRef<int32_t> lens) {
  int64_t seq = padded.shape[1], row = padded.shape[2] * padded.shape[3];
  int64_t total = 0;
  for (int32_t n : lens)
    total += n;
  HostTensor packed(padded.type, {total, padded.shape[2], padded.shape[3]});
  auto to = packed.data.begin();
  for (size_t b = 0; b < lens.size(); ++b)
    to = std::copy_n(padded.data.begin() + int64_t(b) * seq * row, lens[b] * row, to);
  return packed;
}

HostTensor attnc::unpackSequences(const HostTensor &packed, llvm::ArrayRef<int32_t> lens,
                                  int64_t seq) {
  int64_t row = packed.shape[1] * packed.shape[2];
  HostTensor padded(packed.type,
                    {int64_t(lens.size()), seq, packed.shape[1], packed.shape[2]});
  auto from = packed.data.begin();
  for (size_t b = 0; b < lens.size(); ++b) {
    std::copy_n(from, lens[b] * row, padded.data.begin() + int64_t(b) * seq * row);
    from += lens[b] * row;
  }
  return padded;
}

HostTensor attnc::unpackLse(const HostTensor &packed, llvm::ArrayRef<int32_t> lens,
                            int64_t seqQ) {
  int64_t heads = packed.shape[0], total = packed.shape[1];
  HostTensor padded(ElementType::f32, {int64_t(lens.size()), heads, seqQ});
  std::fill(padded.data.begin(), padded.data.end(), -INFINITY);
  int64_t first = 0;
  for (size_t b = 0; b < lens.size(); ++b) {
    for (int64_t h = 0; h < heads; ++h)
      std::copy_n(packed.data.begin() + h * total + first, lens[b],
                  padded.data.begin() + (int64_t(b) * heads + h) * seqQ);
    first += lens[b];
  }
  return padded;
}
