//===- InlineMod.h - a score_mod / mask_mod body inlined --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_COMMON_INLINEMOD_H
#define ATTNC_CONVERSION_COMMON_INLINEMOD_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::attn {

/// An attn.load's lowering: the element at the (inlined) indices.
using ModLoadFn = llvm::function_ref<Value(Operation *load, ArrayRef<Value> indices)>;

/// Clones a score_mod / mask_mod body at b's insertion point with its block
/// arguments bound to `args`; returns the yielded value. A zero divisor of an
/// integer division would trap: each divides by 1 instead, and
/// `onZeroDivisor(isZero)` (if given) records the i1 that says it happened.
/// Each attn.load becomes what `load` builds; a body with loads needs it.
Value inlineMod(OpBuilder &b, Location loc, Region &region, ArrayRef<Value> args,
                llvm::function_ref<void(Value)> onZeroDivisor = nullptr,
                ModLoadFn load = nullptr);

/// What inlineModWithSlopes returns: the body's value, its derivative with
/// respect to each seed, and for a seed that is an attn.load the (inlined)
/// indices it read at (empty for the score).
struct ModSlopes {
  Value value;
  SmallVector<Value> slopes;
  SmallVector<SmallVector<Value, 4>> indices;
};

/// inlineMod of a score_mod body and its derivatives with respect to each of
/// `seeds`: null for the score (block argument 0), or an attn.load of the
/// body (the element of a table it reads); forward mode, a chain rule op by
/// op per seed (InlineModSlope.cpp). Integer, comparison, conversion and
/// rounding ops have a zero derivative, as almost everywhere.
ModSlopes inlineModWithSlopes(OpBuilder &b, Location loc, Region &region, ArrayRef<Value> args,
                              llvm::function_ref<void(Value)> onZeroDivisor, ModLoadFn load,
                              ArrayRef<Operation *> seeds);

/// An attn.load over vectors of indices: the elements of the lanes `valid`
/// marks (others any value).
using ModGatherFn = llvm::function_ref<Value(Operation *load, ArrayRef<Value> indices,
                                             Value valid)>;

/// Which ops of a body to emit in a stage (null: all).
using ModOpFilter = llvm::function_ref<bool(Operation &)>;

/// inlineMod's op-by-op part: emits the ops of `block` that `emit` selects
/// and `map` does not hold yet, reading their operands from `map` (block
/// arguments and earlier stages' results) and adding their results.
void inlineModOps(OpBuilder &b, Location loc, Block &block, IRMapping &map, ModOpFilter emit,
                  llvm::function_ref<void(Value)> onZeroDivisor, ModLoadFn load);

/// The ops of a body that depend on its block argument `arg`, transitively.
llvm::DenseSet<Operation *> modOpsDependingOn(Region &region, unsigned arg);

/// Whether inlineModVectorOps takes `region`: integer, index and i1 ops and
/// int32 loads only (no float, no conversions to or from float).
bool canInlineModVector(Region &region);

/// inlineModOps over vectors: the ops `emit` selects applied lane by lane on
/// `map`'s vector values, constants broadcast, loads through `gather`. A
/// divisor of 0 in a lane `valid` marks calls onZeroDivisor(any) with the i1
/// saying whether one did (dividing by 1 instead).
void inlineModVectorOps(OpBuilder &b, Location loc, Block &block, IRMapping &map, Value valid,
                        ModOpFilter emit, llvm::function_ref<void(Value)> onZeroDivisor,
                        ModGatherFn gather);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_COMMON_INLINEMOD_H
