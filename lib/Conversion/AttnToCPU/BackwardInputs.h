//===- BackwardInputs.h - gradients of the tables a score_mod reads -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to AttnToCPU. The f32 mod inputs of a backward kernel
// (KernelInterface.h, backwardInterface): each dkdv item (b, g, chunk) adds
// its pairs' share of dx into its own slice of x_part: G d score_mod / d x
// at each element x a score_mod reads, G = P (dP - D) (dS before the
// score_mod's slope). The element pass records, per pair element and f32
// load, the slope and where in the slice its element is (the score_mod is
// inlined once, with a forward-mode chain per load); after dP, the table
// pass adds G times the slope there. Phase d_x sums the slices in item
// order, so that dx, like dq, does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDINPUTS_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDINPUTS_H

#include "LoopBuilder.h"
#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Conversion/Common/ModInputLoad.h"

namespace mlir::attn::cpu {

class InputGradients : LoopBuilder {
public:
  /// The f32 inputs of `op` among `views`: their gradients `grads` (d_x)
  /// and slices `shares` (x_part), with strides read from `params`.
  InputGradients(ImplicitLocOpBuilder &b, FlashBackwardOp op, const ModInputViews &views,
                 ValueRange grads, ValueRange shares, Value params);

  /// The f32 inputs of `op`, in declaration order.
  static SmallVector<ModInputAttr> tablesOf(FlashBackwardOp op);
  /// Whether the score_mod reads one (else every d_x is 0).
  bool read() const { return !loads.empty(); }
  /// The score_mod's f32 attn.load ops: inlineModWithSlopes' seeds.
  ArrayRef<Operation *> seeds() const { return loads; }

  /// Item (batch, kvHead, chunk)'s slices: 0.
  void zeroShares(Value batch, Value kvHead, Value chunk);
  /// The per-element records of a tile pair (rows x keys): allocated once.
  void allocate(int64_t rows, int64_t keys);
  /// Records element (i, j) from `mod` (inlineModWithSlopes with seeds null,
  /// then seeds()): each load's slope and its element's place in a slice,
  /// -1 where an index is outside the input (its load failed the item).
  void record(const ModSlopes &mod, Value i, Value j);
  /// Adds g times each recorded slope of element (i, j) to the item's
  /// slices.
  void accumulate(Value g, Value i, Value j, Value batch, Value kvHead, Value chunk);
  /// Phase d_x of table `n`: row i of dx is the sum of the items' slices'.
  void sumShares(size_t n, Value i);

private:
  struct Table {
    StringRef name;
    Value grad, share;
    SmallVector<Value, 4> gradStrides, extents;
    Value shareStrides[3];
  };
  Value sliceAt(const Table &t, Value batch, Value kvHead, Value chunk);
  Value compactIndex(const Table &t, ArrayRef<Value> at);
  void forEachIndex(ArrayRef<Value> extents, SmallVector<Value, 4> &at,
                    function_ref<void(ArrayRef<Value>)> fn);

  FlashBackwardOp op;
  SmallVector<Table> tables;
  SmallVector<Operation *> loads; // the score_mod's f32 attn.load ops
  SmallVector<const Table *> tableOf; // per load
  SmallVector<Value> slopes, places; // per load, [rows, keys]: f32, index
  Value batches;                  // the call's batch
};

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDINPUTS_H
