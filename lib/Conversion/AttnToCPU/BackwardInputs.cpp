//===- BackwardInputs.cpp - gradients of the tables a score_mod reads -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A slice of x_part is x's shape, compact.
//
//===----------------------------------------------------------------------===//

#include "BackwardInputs.h"

#include "attnc/Runtime/attnc_runtime.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

SmallVector<ModInputAttr> InputGradients::tablesOf(FlashBackwardOp op) {
  SmallVector<ModInputAttr> tables;
  if (ArrayAttr inputs = op.getInputsAttr())
    for (auto decl : inputs.getAsRange<ModInputAttr>())
      if (decl.getElementType().isF32())
        tables.push_back(decl);
  return tables;
}

InputGradients::InputGradients(ImplicitLocOpBuilder &b, FlashBackwardOp op,
                               const ModInputViews &views, ValueRange grads, ValueRange shares,
                               Value params)
    : LoopBuilder(b), op(op) {
  this->params = params;
  // Params (backwardInterface): batch, every input's strides, then each
  // table's d_x strides, then its slice strides (batch, kv_heads, chunks).
  int32_t next = ATTNC_P_BACKWARD_COUNT;
  batches = readParam(next++);
  for (auto decl : op.getInputsAttr().getAsRange<ModInputAttr>())
    next += int32_t(decl.getDims().size());
  for (auto [decl, grad, share] : llvm::zip(tablesOf(op), grads, shares)) {
    Table t{decl.getName().getValue(), grad, share, {}, {}, {}};
    for (size_t d = 0; d < decl.getDims().size(); ++d)
      t.gradStrides.push_back(readParam(next++));
    llvm::append_range(t.extents, views.extentsOf(t.name));
    tables.push_back(std::move(t));
  }
  for (Table &t : tables)
    for (Value &s : t.shareStrides)
      s = readParam(next++);
  for (Operation &o : op.getScoreMod().getOps())
    if (auto load = dyn_cast<LoadOp>(o); load && load.getType().isF32()) {
      loads.push_back(load);
      tableOf.push_back(&*llvm::find_if(
          tables, [&](const Table &t) { return t.name == load.getInput(); }));
    }
}

void InputGradients::allocate(int64_t rows, int64_t keys) {
  for (size_t n = 0; n < loads.size(); ++n) {
    slopes.push_back(memref::AllocaOp::create(b, MemRefType::get({rows, keys}, b.getF32Type())));
    places.push_back(
        memref::AllocaOp::create(b, MemRefType::get({rows, keys}, b.getIndexType())));
  }
}

Value InputGradients::sliceAt(const Table &t, Value batch, Value kvHead, Value chunk) {
  return add(add(mul(batch, t.shareStrides[0]), mul(kvHead, t.shareStrides[1])),
             mul(chunk, t.shareStrides[2]));
}

Value InputGradients::compactIndex(const Table &t, ArrayRef<Value> at) {
  Value flat = idx(0);
  for (auto [i, extent] : llvm::zip(at, t.extents))
    flat = add(mul(flat, extent), i);
  return flat;
}

void InputGradients::forEachIndex(ArrayRef<Value> extents, SmallVector<Value, 4> &at,
                                  function_ref<void(ArrayRef<Value>)> fn) {
  if (extents.empty())
    return fn(at);
  loop(0, extents.front(), 1, [&](Value i) {
    at.push_back(i);
    forEachIndex(extents.drop_front(), at, fn);
    at.pop_back();
  });
}

void InputGradients::zeroShares(Value batch, Value kvHead, Value chunk) {
  for (const Table &t : tables) {
    Value size = idx(1);
    for (Value extent : t.extents)
      size = mul(size, extent);
    Value base = sliceAt(t, batch, kvHead, chunk);
    loop(0, size, 1, [&](Value e) { memref::StoreOp::create(b, f32(0), t.share, add(base, e)); });
  }
}

void InputGradients::record(const ModSlopes &mod, Value i, Value j) {
  for (size_t n = 0; n < loads.size(); ++n) {
    const Table &t = *tableOf[n];
    ArrayRef<Value> at = mod.indices[n + 1];
    Value inside = arith::ConstantIntOp::create(b, 1, 1);
    for (auto [index, extent] : llvm::zip(at, t.extents))
      inside = arith::AndIOp::create(
          b, inside, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index, extent));
    Value place = arith::SelectOp::create(b, inside, compactIndex(t, at), idx(-1));
    memref::StoreOp::create(b, mod.slopes[n + 1], slopes[n], ValueRange{i, j});
    memref::StoreOp::create(b, place, places[n], ValueRange{i, j});
  }
}

void InputGradients::accumulate(Value g, Value i, Value j, Value batch, Value kvHead,
                                Value chunk) {
  for (size_t n = 0; n < loads.size(); ++n) {
    const Table &t = *tableOf[n];
    Value place = memref::LoadOp::create(b, places[n], ValueRange{i, j});
    // Outside the input: its load failed the item; nothing is added (never a
    // store outside the slice).
    ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::sge, place, idx(0)), [&] {
      Value where = add(sliceAt(t, batch, kvHead, chunk), place);
      Value slope = memref::LoadOp::create(b, slopes[n], ValueRange{i, j});
      Value sum = arith::AddFOp::create(b, memref::LoadOp::create(b, t.share, where),
                                        arith::MulFOp::create(b, g, slope));
      memref::StoreOp::create(b, sum, t.share, where);
    });
  }
}

void InputGradients::sumShares(size_t n, Value i) {
  const Table &t = tables[n];
  Value kvHeads = idx(op.getKvHeads()), chunks = idx(op.getChunks());
  Value acc = memref::AllocaOp::create(b, MemRefType::get({}, b.getF32Type()));
  SmallVector<Value, 4> rest = {i};
  forEachIndex(ArrayRef<Value>(t.extents).drop_front(), rest, [&](ArrayRef<Value> at) {
    Value inner = compactIndex(t, at);
    memref::StoreOp::create(b, f32(0), acc);
    // In item order (batch, KV head, chunk): the same sum on any thread count.
    loop(0, batches, 1, [&](Value bi) {
      loop(0, kvHeads, 1, [&](Value g) {
        loop(0, chunks, 1, [&](Value c) {
          Value x = memref::LoadOp::create(b, t.share, add(sliceAt(t, bi, g, c), inner));
          memref::StoreOp::create(
              b, arith::AddFOp::create(b, memref::LoadOp::create(b, acc), x), acc);
        });
      });
    });
    Value out = idx(0);
    for (auto [index, stride] : llvm::zip(at, t.gradStrides))
      out = add(out, mul(index, stride));
    memref::StoreOp::create(b, memref::LoadOp::create(b, acc), t.grad, out);
  });
}
