//===- Normalize.cpp - attn-normalize: canonical attention specs ----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites every attn.attention into the canonical form later stages expect:
// defaults filled (num_kv_heads, scale), causal expressed as a sliding window,
// windows that cover everything turned into #attn.full, and/or compositions
// flattened, deduplicated and simplified; causal linear attentions' chunk set
// where the schedule sets it. Expects verified input; idempotent.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNNORMALIZEPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The run-time bound on [seq_q, seq_kv], when the spec gives one.
using SeqBound = std::optional<std::pair<int64_t, int64_t>>;

/// True when the window keeps every (q, kv) pair for all allowed lengths.
/// top_left: q - left <= kv <= q + right must hold for q < seq_q, kv < seq_kv;
/// bottom_right shifts q by seq_kv - seq_q, which swaps which bound each
/// length constrains.
bool coversEverything(SlidingWindowMaskAttr window, SeqBound bound) {
  if (window.isLeftUnbounded() && window.isRightUnbounded())
    return true;
  if (!bound)
    return false;
  auto [maxQ, maxKv] = *bound;
  bool bottomRight = window.getAlignment() == Alignment::bottom_right;
  int64_t needLeft = (bottomRight ? maxKv : maxQ) - 1;
  int64_t needRight = (bottomRight ? maxQ : maxKv) - 1;
  return window.getLeft() >= needLeft && window.getRight() >= needRight;
}

class MaskNormalizer {
public:
  MaskNormalizer(MLIRContext *ctx, SeqBound bound) : ctx(ctx), bound(bound) {}

  Attribute normalize(Attribute mask) {
    if (auto causal = dyn_cast<CausalMaskAttr>(mask))
      mask = SlidingWindowMaskAttr::get(ctx, kUnbounded, 0,
                                        causal.getAlignment());
    if (auto window = dyn_cast<SlidingWindowMaskAttr>(mask))
      return coversEverything(window, bound) ? FullMaskAttr::get(ctx) : mask;
    if (auto conj = dyn_cast<AndMaskAttr>(mask))
      return compose(conj.getMasks(), /*isAnd=*/true);
    if (auto disj = dyn_cast<OrMaskAttr>(mask))
      return compose(disj.getMasks(), /*isAnd=*/false);
    return mask;
  }

private:
  /// Normalizes an and/or. `full` is the identity of `and` and absorbs `or`.
  /// Windows of one alignment all contain their center, so their intersection
  /// (and) and union (or) are windows again: min / max of the bounds.
  Attribute compose(ArrayRef<Attribute> operands, bool isAnd) {
    SmallVector<Attribute> flat;
    flatten(operands, isAnd, flat);
    llvm::SmallSetVector<Attribute, 4> kept;
    for (Attribute mask : mergeWindows(flat, isAnd)) {
      // A merged window may now cover everything.
      if (auto window = dyn_cast<SlidingWindowMaskAttr>(mask))
        mask = normalize(window);
      if (isa<FullMaskAttr>(mask)) {
        if (isAnd)
          continue;
        return mask;
      }
      kept.insert(mask);
    }
    if (kept.empty())
      return FullMaskAttr::get(ctx);
    if (kept.size() == 1)
      return kept.front();
    if (isAnd)
      return AndMaskAttr::get(ctx, kept.getArrayRef());
    return OrMaskAttr::get(ctx, kept.getArrayRef());
  }

  void flatten(ArrayRef<Attribute> operands, bool isAnd,
               SmallVectorImpl<Attribute> &flat) {
    for (Attribute operand : operands) {
      Attribute mask = normalize(operand);
      if (auto conj = dyn_cast<AndMaskAttr>(mask); conj && isAnd)
        flatten(conj.getMasks(), isAnd, flat);
      else if (auto disj = dyn_cast<OrMaskAttr>(mask); disj && !isAnd)
        flatten(disj.getMasks(), isAnd, flat);
      else
        flat.push_back(mask);
    }
  }

  SmallVector<Attribute> mergeWindows(ArrayRef<Attribute> masks, bool isAnd) {
    SmallVector<Attribute> result;
    // Index in `result` of the window seen so far for each alignment.
    std::optional<size_t> slot[2];
    for (Attribute mask : masks) {
      auto window = dyn_cast<SlidingWindowMaskAttr>(mask);
      if (!window) {
        result.push_back(mask);
        continue;
      }
      std::optional<size_t> &at = slot[static_cast<int>(window.getAlignment())];
      if (!at) {
        at = result.size();
        result.push_back(window);
        continue;
      }
      auto prev = cast<SlidingWindowMaskAttr>(result[*at]);
      auto pick = [&](int64_t a, int64_t b) {
        return isAnd ? std::min(a, b) : std::max(a, b);
      };
      result[*at] = SlidingWindowMaskAttr::get(
          ctx, pick(prev.getLeft(), window.getLeft()),
          pick(prev.getRight(), window.getRight()), window.getAlignment());
    }
    return result;
  }

  MLIRContext *ctx;
  SeqBound bound;
};

struct AttnNormalizePass
    : public mlir::attn::impl::AttnNormalizePassBase<AttnNormalizePass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](AttentionOp op) { normalizeAttention(op); });
    if (linearChunk == 0)
      return;
    if (linearChunk != 32 && linearChunk != 64 && linearChunk != 128) {
      getOperation().emitError("linear-chunk must be 32, 64 or 128, got ") << int64_t(linearChunk);
      return signalPassFailure();
    }
    getOperation().walk([&](LinearAttentionOp op) {
      if (op.getCausal())
        op.setChunkAttr(Builder(op.getContext()).getI64IntegerAttr(linearChunk));
    });
  }

  static void normalizeAttention(AttentionOp op) {
    Builder b(op.getContext());
    if (!op.getNumKvHeadsAttr())
      op.setNumKvHeadsAttr(b.getI64IntegerAttr(op.getHeads()));
    if (!op.getScaleAttr()) // 1/sqrt(head_dim), or 1 for additive scores
      op.setScaleAttr(b.getF64FloatAttr(op.getScaleOrDefault()));
    SeqBound bound;
    if (std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq())
      bound = std::pair((*maxSeq)[0], (*maxSeq)[1]);
    Attribute mask = MaskNormalizer(op.getContext(), bound).normalize(op.getMask());
    op.setMaskAttr(cast<MaskAttrInterface>(mask));
  }
};

} // namespace
