//===- InlineMod.h - a score_mod / mask_mod body inlined --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_COMMON_INLINEMOD_H
#define ATTNC_CONVERSION_COMMON_INLINEMOD_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"

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

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_COMMON_INLINEMOD_H
