//===- ModInputLoad.cpp - attn.load in a generated kernel -----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/ModInputLoad.h"

#include "attnc/Dialect/Attn/ModInputs.h"
#include "attnc/Interface/KernelInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
Value loadParam(OpBuilder &b, Location loc, Value params, int64_t at) {
  Value i = arith::ConstantIndexOp::create(b, loc, at);
  Value v = memref::LoadOp::create(b, loc, params, ValueRange{i});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
} // namespace

ModInputViews::ModInputViews(OpBuilder &b, Location loc, AttentionSpecOpInterface spec,
                             ValueRange buffers, Value params, int32_t firstArg)
    : ModInputViews(
          b, loc, spec, buffers, [&](int64_t at) { return loadParam(b, loc, params, at); },
          firstArg) {}

ModInputViews::ModInputViews(OpBuilder &b, Location loc, AttentionSpecOpInterface spec,
                             ValueRange buffers, ParamFn param, int32_t firstArg) {
  ArrayAttr decls = spec.getInputsAttr();
  if (!decls)
    return;
  int32_t outputs = spec.hasOutput(OutputKind::weights) ? 4 : 0;
  std::optional<uint64_t> page = spec.getPageSize();
  int32_t batchAt = attnc::modInputBatchParam(outputs, spec.getVarlen(),
                                              spec.getNumSplits().has_value(),
                                              page ? int64_t(*page) : -1,
                                              spec.hasOutput(OutputKind::dq));
  int32_t next = batchAt + 1;
  Value batch = param(batchAt);
  Value seqQ = param(ATTNC_P_SEQ_Q), seqKv = param(ATTNC_P_SEQ_KV);
  for (auto [i, decl] : llvm::enumerate(decls.getAsRange<ModInputAttr>())) {
    Input in{decl.getName().getValue(), buffers[i], {}, {}, firstArg + int32_t(i)};
    for (StringRef text : decl.getDims().getAsValueRange<StringAttr>()) {
      DimExpr d = *parseDimExpr(text); // verified
      if (std::optional<int64_t> fixed = staticExtent(spec, d)) {
        in.extents.push_back(arith::ConstantIndexOp::create(b, loc, *fixed));
        in.strides.push_back(param(next++));
        continue;
      }
      std::optional<int64_t> fixed = fixedSymbol(spec, d.symbol);
      Value sym = fixed ? arith::ConstantIndexOp::create(b, loc, *fixed).getResult()
                  : d.symbol == "batch" ? batch
                  : d.symbol == "seq_q" ? seqQ
                                        : seqKv;
      Value scaled = arith::MulIOp::create(
          b, loc, sym, arith::ConstantIndexOp::create(b, loc, d.scale));
      Value extent = arith::AddIOp::create(b, loc, scaled,
                                           arith::ConstantIndexOp::create(b, loc, d.offset));
      in.extents.push_back(arith::MaxSIOp::create(b, loc, extent,
                                                  arith::ConstantIndexOp::create(b, loc, 0)));
      in.strides.push_back(param(next++));
    }
    inputs.push_back(std::move(in));
  }
}

const ModInputViews::Input &ModInputViews::find(StringRef name) const {
  for (const Input &in : inputs)
    if (in.name == name)
      return in;
  llvm_unreachable("attn.load of an undeclared input (the verifier rejects it)");
}

Value ModInputViews::gather(OpBuilder &b, Location loc, LoadOp load, ArrayRef<Value> indices,
                            Value valid, function_ref<void(Value, int32_t)> onFailure) const {
  const Input &in = find(load.getInput());
  ArrayRef<int64_t> lanes = cast<VectorType>(valid.getType()).getShape();
  auto indexVec = VectorType::get(lanes, b.getIndexType());
  auto splat = [&](Value scalar) { return vector::BroadcastOp::create(b, loc, indexVec, scalar); };
  Value inside = valid;
  Value at = splat(arith::ConstantIndexOp::create(b, loc, 0));
  for (auto [n, index] : llvm::enumerate(indices)) {
    // Unsigned: a negative index is past every extent.
    Value within = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                                         splat(in.extents[n]));
    inside = arith::AndIOp::create(b, loc, inside, within);
    at = arith::AddIOp::create(b, loc, at,
                               arith::MulIOp::create(b, loc, index, splat(in.strides[n])));
  }
  Value allTrue = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(VectorType::get(lanes, b.getI1Type()), true));
  Value bad = arith::AndIOp::create(b, loc, valid, arith::XOrIOp::create(b, loc, inside, allTrue));
  onFailure(vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, bad),
            ATTNC_ITEM_INDEX_FAILURE + in.arg);
  auto type = VectorType::get(lanes, load.getType());
  Value zeros = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  return vector::GatherOp::create(b, loc, type, in.buffer, ValueRange{c0}, at, inside, zeros);
}

namespace {
/// The (min, max) of `acc` and the entries of `buffer` over dims n.. of the
/// box, from element `offset`, as index values.
SmallVector<Value> scanBox(OpBuilder &b, Location loc, Value buffer, ArrayRef<Value> strides,
                           ArrayRef<std::pair<Value, Value>> box, Value offset, ValueRange acc) {
  if (box.empty()) {
    Value v = memref::LoadOp::create(b, loc, buffer, ValueRange{offset});
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    return {arith::MinSIOp::create(b, loc, acc[0], i), arith::MaxSIOp::create(b, loc, acc[1], i)};
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value end = arith::AddIOp::create(b, loc, box.front().second, one);
  auto loop = scf::ForOp::create(
      b, loc, box.front().first, end, one, acc,
      [&](OpBuilder &nb, Location, Value i, ValueRange inner) {
        Value at = arith::AddIOp::create(nb, loc, offset,
                                         arith::MulIOp::create(nb, loc, i, strides.front()));
        scf::YieldOp::create(nb, loc, scanBox(nb, loc, buffer, strides.drop_front(),
                                              box.drop_front(), at, inner));
      });
  return loop.getResults();
}
} // namespace

attnc::LoadRange ModInputViews::range(OpBuilder &b, Location loc, LoadOp load,
                                      ArrayRef<std::pair<Value, Value>> box) const {
  const Input &in = find(load.getInput());
  using P = arith::CmpIPredicate;
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value inside = arith::ConstantIntOp::create(b, loc, 1, 1), count = c(1);
  for (auto [n, bounds] : llvm::enumerate(box)) {
    auto [lo, hi] = bounds;
    Value within = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, P::sge, lo, c(0)),
        arith::CmpIOp::create(b, loc, P::slt, hi, in.extents[n]));
    inside = arith::AndIOp::create(b, loc, inside, within);
    // Each span capped, so that the product cannot overflow.
    Value span = arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, hi, lo), c(1));
    count = arith::MulIOp::create(b, loc, count,
                                  arith::MinSIOp::create(b, loc, span, c(kMaxScan + 1)));
  }
  Value scan = arith::AndIOp::create(b, loc, inside,
                                     arith::CmpIOp::create(b, loc, P::sle, count, c(kMaxScan)));
  Type index = b.getIndexType();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{index, index}, scan, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> init = {c(INT64_MAX), c(INT64_MIN)};
  scf::YieldOp::create(b, loc, scanBox(b, loc, in.buffer, in.strides, box, c(0), init));
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, ValueRange{c(INT32_MIN), c(INT32_MAX)});
  return {ifOp.getResult(0), ifOp.getResult(1), inside};
}

Value ModInputViews::element(OpBuilder &b, Location loc, StringRef name,
                             ArrayRef<Value> indices) const {
  const Input &in = find(name);
  Value at = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [index, stride] : llvm::zip(indices, in.strides))
    at = arith::AddIOp::create(b, loc, at, arith::MulIOp::create(b, loc, index, stride));
  return memref::LoadOp::create(b, loc, in.buffer, at);
}

std::pair<Value, Value> ModInputViews::clampedLoad(OpBuilder &b, Location loc, LoadOp load,
                                                   ArrayRef<Value> indices) const {
  const Input &in = find(load.getInput());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1), at = zero;
  for (auto [i, index] : llvm::enumerate(indices)) {
    // Unsigned: a negative index is past every extent.
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, in.extents[i]);
    ok = arith::AndIOp::create(b, loc, ok, inside);
    Value clamped = arith::SelectOp::create(b, loc, inside, index, zero);
    at = arith::AddIOp::create(b, loc, at, arith::MulIOp::create(b, loc, clamped, in.strides[i]));
  }
  return {memref::LoadOp::create(b, loc, in.buffer, at), ok};
}

Value ModInputViews::load(OpBuilder &b, Location loc, LoadOp load, ArrayRef<Value> indices,
                          function_ref<void(OpBuilder &, int32_t)> onFailure) const {
  const Input &in = find(load.getInput());
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1), at = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [i, index] : llvm::enumerate(indices)) {
    // Unsigned: a negative index is past every extent.
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, in.extents[i]);
    ok = arith::AndIOp::create(b, loc, ok, inside);
    at = arith::AddIOp::create(b, loc, at, arith::MulIOp::create(b, loc, index, in.strides[i]));
  }
  Type type = load.getType();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, ok, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(b, loc, ValueRange{memref::LoadOp::create(b, loc, in.buffer, at)});
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  onFailure(b, ATTNC_ITEM_INDEX_FAILURE + in.arg);
  scf::YieldOp::create(b, loc, ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(type))});
  return ifOp.getResult(0);
}
