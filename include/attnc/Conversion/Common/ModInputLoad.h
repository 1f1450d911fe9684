//===- ModInputLoad.h - attn.load in a generated kernel ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A spec's mod inputs as an MLIR kernel (CPU, CUDA) sees them: flat views
// and each dim's stride and extent (from params), and attn.load as a checked
// memref.load: an index outside its dim's extent loads nothing and reports
// ATTNC_ITEM_INDEX_FAILURE + the input's argument.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_COMMON_MODINPUTLOAD_H
#define ATTNC_CONVERSION_COMMON_MODINPUTLOAD_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {

class ModInputViews {
public:
  ModInputViews() = default;
  /// Param `at` as an index, where the builder is.
  using ParamFn = function_ref<Value(int64_t at)>;
  /// The views of `spec`'s inputs, `buffers` (arguments `firstArg`, ...),
  /// with extents and strides from `param`.
  ModInputViews(OpBuilder &b, Location loc, AttentionSpecOpInterface spec, ValueRange buffers,
                ParamFn param, int32_t firstArg);
  /// The same, params read from the memref `params` (a CPU kernel's).
  ModInputViews(OpBuilder &b, Location loc, AttentionSpecOpInterface spec, ValueRange buffers,
                Value params, int32_t firstArg);

  bool empty() const { return inputs.empty(); }
  /// Element `indices` of input `name`, unchecked: for indices inside its
  /// shape by construction (the runtime checked the shape).
  Value element(OpBuilder &b, Location loc, StringRef name, ArrayRef<Value> indices) const;
  /// The extent of each dim of input `name`.
  ArrayRef<Value> extentsOf(StringRef name) const { return find(name).extents; }

  /// The element `load` reads at `indices`; where an index is outside its
  /// dim, 0 (nothing is read) and `onFailure(code)` runs under that condition.
  Value load(OpBuilder &b, Location loc, LoadOp load, ArrayRef<Value> indices,
             function_ref<void(OpBuilder &, int32_t)> onFailure) const;

  /// Branch-free `load` (a GPU kernel's): the element at `indices`, each
  /// index outside its dim taken as 0 (so an input must hold an element),
  /// and an i1 that says whether they all were inside.
  std::pair<Value, Value> clampedLoad(OpBuilder &b, Location loc, LoadOp load,
                                      ArrayRef<Value> indices) const;
  /// The argument of input `name`.
  int32_t argOf(StringRef name) const { return find(name).arg; }

  /// `load` over vectors of indices: the elements of the lanes `valid` marks
  /// whose indices lie inside the input (0 elsewhere); where a valid lane's
  /// do not, `onFailure(any, code)` gets the i1 that says so.
  Value gather(OpBuilder &b, Location loc, LoadOp load, ArrayRef<Value> indices, Value valid,
               function_ref<void(Value, int32_t)> onFailure) const;

  /// The bounds of what an int32 `load` reads over `box` (a tile's
  /// verdict, attnc::LoadRangeFn): the smallest and largest entry, scanned,
  /// where the box lies inside the input and holds at most kMaxScan
  /// entries; else every int32.
  attnc::LoadRange range(OpBuilder &b, Location loc, LoadOp load,
                         ArrayRef<std::pair<Value, Value>> box) const;

  /// The most entries a tile's verdict scans per load: a tile's rows or
  /// columns of ids, lengths or offsets, not a region of a table.
  static constexpr int64_t kMaxScan = 4096;

private:
  struct Input {
    StringRef name;
    Value buffer;
    SmallVector<Value, 4> extents, strides;
    int32_t arg;
  };
  const Input &find(StringRef name) const;
  SmallVector<Input> inputs;
};

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_COMMON_MODINPUTLOAD_H
