//===- InlineMod.cpp - a score_mod / mask_mod body inlined ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/InlineMod.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace {
bool isDivision(Operation &op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp,
             arith::CeilDivSIOp>(op);
}
} // namespace

void mlir::attn::inlineModOps(OpBuilder &b, Location loc, Block &block, IRMapping &map,
                              ModOpFilter emit, llvm::function_ref<void(Value)> onZeroDivisor,
                              ModLoadFn load) {
  for (Operation &inner : block.without_terminator()) {
    if ((emit && !emit(inner)) || map.contains(inner.getResult(0)))
      continue;
    if (inner.getName().getStringRef() == "attn.load") {
      if (!load) // the backend refused inputs before it got here
        llvm::report_fatal_error("attn.load in a mod body this backend does not lower");
      SmallVector<Value> indices;
      for (Value index : inner.getOperands())
        indices.push_back(map.lookup(index));
      map.map(inner.getResult(0), load(&inner, indices));
      continue;
    }
    if (!isDivision(inner)) {
      b.clone(inner, map);
      continue;
    }
    Value divisor = map.lookup(inner.getOperand(1));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(divisor.getType()));
    Value one = arith::ConstantOp::create(b, loc, b.getOneAttr(divisor.getType()));
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero);
    if (onZeroDivisor)
      onZeroDivisor(isZero);
    // The divisor as the op sees it, not where else the body uses it.
    IRMapping local = map;
    local.map(inner.getOperand(1), arith::SelectOp::create(b, loc, isZero, one, divisor));
    map.map(inner.getResult(0), b.clone(inner, local)->getResult(0));
  }
}

Value mlir::attn::inlineMod(OpBuilder &b, Location loc, Region &region, ArrayRef<Value> args,
                            llvm::function_ref<void(Value)> onZeroDivisor, ModLoadFn load) {
  IRMapping map;
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    map.map(arg, value);
  inlineModOps(b, loc, block, map, nullptr, onZeroDivisor, load);
  return map.lookup(block.getTerminator()->getOperand(0));
}

llvm::DenseSet<Operation *> mlir::attn::modOpsDependingOn(Region &region, unsigned arg) {
  llvm::DenseSet<Operation *> ops;
  Block &block = region.front();
  for (Operation &op : block.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) {
          return v == block.getArgument(arg) || ops.contains(v.getDefiningOp());
        }))
      ops.insert(&op);
  return ops;
}

bool mlir::attn::canInlineModVector(Region &region) {
  auto scalarInt = [](Type t) { return t.isIntOrIndex(); };
  return llvm::all_of(region.front().without_terminator(), [&](Operation &op) {
    bool ints = llvm::all_of(op.getOperandTypes(), scalarInt) &&
                llvm::all_of(op.getResultTypes(), scalarInt);
    if (op.getName().getStringRef() == "attn.load")
      return ints;
    return ints && op.getDialect() && op.getDialect()->getNamespace() == "arith" &&
           op.getNumRegions() == 0;
  });
}

void mlir::attn::inlineModVectorOps(OpBuilder &b, Location loc, Block &block, IRMapping &map,
                                    Value valid, ModOpFilter emit,
                                    llvm::function_ref<void(Value)> onZeroDivisor,
                                    ModGatherFn gather) {
  auto lanes = cast<VectorType>(valid.getType()).getShape();
  auto vectorOf = [&](Type t) { return VectorType::get(lanes, t); };
  for (Operation &inner : block.without_terminator()) {
    if ((emit && !emit(inner)) || map.contains(inner.getResult(0)))
      continue;
    SmallVector<Value> operands;
    for (Value v : inner.getOperands())
      operands.push_back(map.lookup(v));
    Value result;
    if (inner.getName().getStringRef() == "attn.load") {
      result = gather(&inner, operands, valid);
    } else if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      result = vector::BroadcastOp::create(b, loc, vectorOf(c.getType()),
                                           b.clone(inner)->getResult(0));
    } else {
      if (isDivision(inner)) { // lanes that divide by 0 divide by 1, and say so
        Type t = operands[1].getType();
        Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(t));
        Value one = arith::ConstantOp::create(b, loc, b.getOneAttr(t));
        Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, operands[1], zero);
        Value bad = arith::AndIOp::create(b, loc, isZero, valid);
        onZeroDivisor(vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, bad));
        operands[1] = arith::SelectOp::create(b, loc, isZero, one, operands[1]);
      }
      OperationState state(loc, inner.getName());
      state.addOperands(operands);
      state.addAttributes(inner.getAttrs());
      state.addTypes(vectorOf(inner.getResult(0).getType()));
      result = b.create(state)->getResult(0);
    }
    map.map(inner.getResult(0), result);
  }
}
