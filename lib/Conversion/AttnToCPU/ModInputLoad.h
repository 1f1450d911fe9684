//===- ModInputLoad.h - attn.load in a CPU kernel ---------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to AttnToCPU. A spec's mod inputs as a CPU kernel sees them: flat
// views and each dim's stride and extent (from params), and attn.load as a
// checked memref.load: an index outside its dim's extent loads nothing and
// reports ATTNC_ITEM_INDEX_FAILURE + the input's argument.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_MODINPUTLOAD_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_MODINPUTLOAD_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::cpu {

class ModInputViews {
public:
  ModInputViews() = default;
  /// The views of `spec`'s inputs, `buffers` (arguments `firstArg`, ...),
  /// with extents and strides read from `params` at the builder.
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

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_MODINPUTLOAD_H
