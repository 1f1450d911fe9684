//===- KvCache.cpp - per-sequence lengths and paged KV caches -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/KvCache.h"

#include "EvalContext.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace attnc;
using namespace mlir::attn;
using attnc::detail::error;
using attnc::detail::LayoutIndexer;

llvm::Expected<std::vector<int32_t>> attnc::parseLengths(llvm::StringRef lensText,
                                                         int64_t batch, int64_t seqKv,
                                                         std::mt19937_64 &random) {
  std::vector<int32_t> lens;
  if (lensText.empty()) {
    lens.assign(batch, int32_t(seqKv));
  } else if (lensText == "random") {
    for (int64_t b = 0; b < batch; ++b)
      lens.push_back(int32_t(random() % uint64_t(seqKv + 1)));
  } else {
    llvm::SmallVector<llvm::StringRef> items;
    lensText.split(items, ',');
    for (llvm::StringRef item : items) {
      int64_t n;
      if (item.trim().getAsInteger(10, n) || n < 0 || n > seqKv)
        return error("--kv-lens: '" + item + "' is not a length in [0, seq_kv = " +
                     llvm::Twine(seqKv) + "]");
      lens.push_back(int32_t(n));
    }
    if (int64_t(lens.size()) != batch)
      return error("--kv-lens gives " + llvm::Twine(lens.size()) +
                   " lengths for batch " + llvm::Twine(batch));
  }
  return lens;
}

llvm::Expected<KvCache> attnc::makeKvCache(AttentionSpecOpInterface op, int64_t batch,
                                           int64_t seqKv, llvm::StringRef lensText,
                                           uint64_t seed) {
  KvCache cache;
  std::optional<uint64_t> page = op.getPageSize();
  if (!page || op.getVarlen()) { // packed sequences' used keys: makeVarlen
    if (!lensText.empty() && !page)
      return error("--kv-lens is for kernels with kv_cache (per-sequence lengths)");
    return cache;
  }
  if (seqKv > std::numeric_limits<int32_t>::max())
    return error("seq_kv " + llvm::Twine(seqKv) + " does not fit the int32 kv_lens");
  cache.pageSize = int64_t(*page);
  std::mt19937_64 random(seed + (1ULL << 42));
  llvm::Expected<std::vector<int32_t>> lens = parseLengths(lensText, batch, seqKv, random);
  if (!lens)
    return lens.takeError();
  cache.lens = std::move(*lens);
  if (cache.pageSize == 0)
    return cache;
  cache.maxPages = (seqKv + cache.pageSize - 1) / cache.pageSize;
  cache.numPages = batch * cache.maxPages;
  cache.table.resize(cache.numPages);
  for (int64_t i = 0; i < cache.numPages; ++i)
    cache.table[i] = int32_t(i);
  std::shuffle(cache.table.begin(), cache.table.end(), random);
  return cache;
}

HostTensor attnc::toPages(AttentionSpecOpInterface op, const HostTensor &kv,
                          const KvCache &cache) {
  int64_t kvHeads = op.getKvHeads(), dim = op.getDim(), page = cache.pageSize;
  bool bhsd = op.getLayout() == Layout::bhsd;
  int64_t batch = kv.shape[0], seqKv = kv.shape[bhsd ? 2 : 1];
  bool headMajor = op.getPagesHeadMajor();
  LayoutIndexer from{op.getLayout(), kvHeads, seqKv, dim};
  HostTensor pages(kv.type, headMajor ? llvm::ArrayRef<int64_t>{cache.numPages, kvHeads, page, dim}
                                      : llvm::ArrayRef<int64_t>{cache.numPages, page, kvHeads, dim});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seqKv; ++s) {
      int64_t id = cache.table[b * cache.maxPages + s / page], row = s % page;
      for (int64_t h = 0; h < kvHeads; ++h) {
        int64_t at = headMajor ? (id * kvHeads + h) * page + row : (id * page + row) * kvHeads + h;
        std::copy_n(kv.data.begin() + from(b, h, s), dim, pages.data.begin() + at * dim);
      }
    }
  return pages;
}

namespace {

/// Sequence b of q (all of it) or of k / v (its first `len` positions) as a
/// batch of one.
HostTensor slice(AttentionSpecOpInterface op, const HostTensor &t, int64_t heads, int64_t b,
                 int64_t len) {
  bool bhsd = op.getLayout() == Layout::bhsd;
  int64_t seq = t.shape[bhsd ? 2 : 1], dim = op.getDim();
  LayoutIndexer from{op.getLayout(), heads, seq, dim}, to{op.getLayout(), heads, len, dim};
  HostTensor part(t.type, bhsd ? llvm::ArrayRef<int64_t>{1, heads, len, dim}
                               : llvm::ArrayRef<int64_t>{1, len, heads, dim});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < len; ++s)
      std::copy_n(t.data.begin() + from(b, h, s), dim, part.data.begin() + to(0, h, s));
  return part;
}

} // namespace

llvm::Expected<ReferenceResult>
attnc::evaluateWithLengths(AttentionSpecOpInterface op, const HostTensor &q, const HostTensor &k,
                           const HostTensor &v, llvm::ArrayRef<int32_t> lens,
                           llvm::ArrayRef<int32_t> qLens, const ModInputs *inputs,
                           llvm::ArrayRef<int32_t> spans) {
  bool bhsd = op.getLayout() == Layout::bhsd;
  int64_t batch = q.shape[0], seqQ = q.shape[bhsd ? 2 : 1], heads = op.getHeads();
  int64_t dim = op.getDim();
  if (int64_t(lens.size()) != batch || (!qLens.empty() && int64_t(qLens.size()) != batch))
    return error("kv_lens has " + llvm::Twine(lens.size()) + " entries for batch " +
                 llvm::Twine(batch));
  auto longest = [](llvm::ArrayRef<int32_t> v, int64_t none) {
    return v.empty() ? none : int64_t(*std::max_element(v.begin(), v.end()));
  };
  // A KV cache's inputs are shaped by its capacity (k's length); packed
  // sequences' by the longest one (what the offsets give a kernel).
  int64_t capacity = k.shape[bhsd ? 2 : 1];
  ProblemSize whole{batch, longest(qLens, seqQ),
                    qLens.empty() ? capacity : longest(spans.empty() ? lens : spans, 0)};
  if (inputs)
    if (llvm::Error err = checkModInputs(op, whole, *inputs))
      return std::move(err);
  ReferenceResult all;
  all.out = HostTensor(q.type, q.shape);
  all.lse = HostTensor(ElementType::f32, {batch, heads, seqQ});
  std::fill(all.lse.data.begin(), all.lse.data.end(), -INFINITY);
  LayoutIndexer qAt{op.getLayout(), heads, seqQ, dim};
  for (int64_t b = 0; b < batch; ++b) {
    int64_t rows = qLens.empty() ? seqQ : qLens[b];
    if (lens[b] == 0 || rows == 0) // nothing to attend to: out 0, lse -inf
      continue;
    int64_t kvHeads = op.getKvHeads();
    llvm::Expected<ReferenceResult> one = evaluateReference(
        op, slice(op, q, heads, b, rows), slice(op, k, kvHeads, b, lens[b]),
        slice(op, v, kvHeads, b, lens[b]), /*wantWeights=*/false, /*firstBatch=*/b, inputs,
        &whole);
    if (!one)
      return one.takeError();
    all.keptPairs += one->keptPairs;
    LayoutIndexer oneAt{op.getLayout(), heads, rows, dim};
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < rows; ++s) {
        if (!one->out.empty())
          std::copy_n(one->out.data.begin() + oneAt(0, h, s), dim,
                      all.out.data.begin() + qAt(b, h, s));
        if (!one->lse.empty())
          all.lse.data[(b * heads + h) * seqQ + s] = one->lse.data[h * rows + s];
      }
  }
  if (!op.hasOutput(OutputKind::out))
    all.out = HostTensor();
  if (!op.hasOutput(OutputKind::lse))
    all.lse = HostTensor();
  return all;
}
