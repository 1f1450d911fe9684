//===- InlineMod.cpp - a score_mod / mask_mod body inlined ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/InlineMod.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

Value mlir::attn::inlineMod(OpBuilder &b, Location loc, Region &region, ArrayRef<Value> args,
                            llvm::function_ref<void(Value)> onZeroDivisor, ModLoadFn load) {
  IRMapping map;
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    map.map(arg, value);
  for (Operation &inner : block.without_terminator()) {
    if (inner.getName().getStringRef() == "attn.load") {
      if (!load) // the backend refused inputs before it got here
        llvm::report_fatal_error("attn.load in a mod body this backend does not lower");
      SmallVector<Value> indices;
      for (Value index : inner.getOperands())
        indices.push_back(map.lookup(index));
      map.map(inner.getResult(0), load(&inner, indices));
      continue;
    }
    if (!isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp>(inner)) {
      b.clone(inner, map);
      continue;
    }
    Value divisor = map.lookup(inner.getOperand(1));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(divisor.getType()));
    Value one = arith::ConstantOp::create(b, loc, b.getOneAttr(divisor.getType()));
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero);
    if (onZeroDivisor)
      onZeroDivisor(isZero);
    map.map(inner.getOperand(1), arith::SelectOp::create(b, loc, isZero, one, divisor));
    b.clone(inner, map);
    map.map(inner.getOperand(1), divisor);
  }
  return map.lookup(block.getTerminator()->getOperand(0));
}
