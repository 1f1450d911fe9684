//===- LoopBuilder.h - scf loops and params for the CPU kernels -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The small builders the CPU kernels' function builders share: index and f32
// constants, index arithmetic, scf loops and branches whose bodies are C++
// lambdas, and the sizes and strides a tile function reads from its params
// array. FlashKernelBuilder (the prefill tile function) and
// DecodeKernelBuilder (the split-KV decode) derive from it; the backward and
// linear attention builders from VectorLoopBuilder, its vector helpers.
// Private to lib/Conversion/AttnToCPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_LOOPBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_LOOPBUILDER_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>

namespace mlir::attn::cpu {

/// (batch, head, seq) strides of one tensor, read from the params array.
/// Packed sequences (varlen) have no batch stride: `start` is where the
/// item's sequence starts instead (its first row's offset).
struct Strides {
  Value batch, head, seq, start;
};

class LoopBuilder {
protected:
  explicit LoopBuilder(ImplicitLocOpBuilder &b) : b(b) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(float(v)));
  }
  Value negInf() { return f32(-std::numeric_limits<double>::infinity()); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value minIdx(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value lt(Value x, Value y) { return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y); }
  /// Logical not of an i1.
  Value notI1(Value x) {
    return arith::XOrIOp::create(b, x, arith::ConstantIntOp::create(b, 1, 1));
  }

  template <typename Fn> void loop(Value lo, Value hi, int64_t step, Fn body) {
    scf::ForOp::create(b, lo, hi, idx(step), ValueRange{},
                       [&](OpBuilder &nested, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nested.getInsertionBlock(),
                                             nested.getInsertionPoint());
                         body(iv);
                         scf::YieldOp::create(b);
                       });
  }
  template <typename Fn> void loop(int64_t lo, Value hi, int64_t step, Fn body) {
    loop(idx(lo), hi, step, body);
  }
  template <typename Fn> void loop(int64_t lo, int64_t hi, int64_t step, Fn body) {
    loop(idx(lo), idx(hi), step, body);
  }
  template <typename Fn> void ifThen(Value cond, Fn body) {
    auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }
  template <typename Then, typename Else> void ifThenElse(Value cond, Then thenFn, Else elseFn) {
    auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    thenFn();
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    elseFn();
  }
  /// scf.if yielding one value of `type` from each branch.
  template <typename Then, typename Else>
  Value select(Value cond, Type type, Then thenFn, Else elseFn) {
    auto ifOp = scf::IfOp::create(b, TypeRange{type}, cond, true, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, thenFn());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, elseFn());
    return ifOp.getResult(0);
  }

  /// params[index] (i64) as an index.
  Value readParam(int64_t index) {
    Value v = memref::LoadOp::create(b, params, idx(index));
    return arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  Strides readStrides(int64_t first) {
    return {readParam(first), readParam(first + 1), readParam(first + 2)};
  }
  /// Where element 0 of (batch, head, row) is in a tensor with strides `s`.
  Value offset(const Strides &s, Value batch, Value head, Value row) {
    return add(add(s.start ? s.start : mul(batch, s.batch), mul(head, s.head)), mul(row, s.seq));
  }

  /// Reads the lengths and the q, k, v, out and lse strides every attention
  /// tile function takes (attnc_param) from `params`.
  void readAttentionParams() {
    seqQ = readParam(ATTNC_P_SEQ_Q);
    seqKv = readParam(ATTNC_P_SEQ_KV);
    qS = readStrides(ATTNC_P_Q_STRIDES);
    kS = readStrides(ATTNC_P_K_STRIDES);
    vS = readStrides(ATTNC_P_V_STRIDES);
    outS = readStrides(ATTNC_P_OUT_STRIDES);
    lseS = readStrides(ATTNC_P_LSE_STRIDES);
  }

  ImplicitLocOpBuilder &b;
  /// The tile function's params argument (sizes and strides, attnc_param).
  Value params;
  Value seqQ, seqKv;
  Strides qS, kS, vS, outS, lseS;
};

/// Bytes per cache line: the prefetch granule, and stack buffers' alignment.
constexpr int64_t kLineBytes = 64;

/// LoopBuilder with vectors of `w` f32 lanes: the loads, stores, FMAs and
/// stack buffers the register-blocked kernels (backward, linear) build with.
class VectorLoopBuilder : protected LoopBuilder {
protected:
  VectorLoopBuilder(ImplicitLocOpBuilder &b, int64_t w) : LoopBuilder(b), w(w) {}

  VectorType vecType() { return VectorType::get({w}, b.getF32Type()); }
  Value splat(Value x) { return vector::BroadcastOp::create(b, vecType(), x); }
  Value zeroVec() {
    return arith::ConstantOp::create(b, DenseElementsAttr::get(vecType(), b.getF32FloatAttr(0)));
  }
  Value load(Value buf, ValueRange at) { return memref::LoadOp::create(b, buf, at); }
  void store(Value x, Value buf, ValueRange at) { memref::StoreOp::create(b, x, buf, at); }
  Value loadVec(Value buf, ValueRange at) { return vector::LoadOp::create(b, vecType(), buf, at); }
  void storeVec(Value x, Value buf, ValueRange at) { vector::StoreOp::create(b, x, buf, at); }
  Value fma(Value x, Value y, Value acc) { return vector::FMAOp::create(b, x, y, acc); }
  /// `valid` lanes (1 to w) from `at` of a tensor, as f32; the others 0 and
  /// not read (the row may end the tensor).
  Value loadLanes(Value buf, Value at, int64_t valid) {
    Type elem = cast<MemRefType>(buf.getType()).getElementType();
    auto type = VectorType::get({w}, elem);
    Value x;
    if (valid == w) {
      x = vector::LoadOp::create(b, type, buf, ValueRange{at});
    } else {
      Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                                ValueRange{idx(valid)});
      Value pass =
          arith::ConstantOp::create(b, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
      x = vector::MaskedLoadOp::create(b, type, buf, ValueRange{at}, mask, pass);
    }
    return elem.isF32() ? x : arith::ExtFOp::create(b, vecType(), x).getResult();
  }
  /// An scf.for over [lo, hi) carrying `init` (register-blocked
  /// accumulators), each step's new values from `step`; returns the last.
  using Step = llvm::function_ref<SmallVector<Value>(Value l, ValueRange acc)>;
  SmallVector<Value> fold(Value lo, Value hi, SmallVector<Value> init, Step step,
                          int64_t stride = 1) {
    auto loop = scf::ForOp::create(b, lo, hi, idx(stride), init,
                                   [&](OpBuilder &nested, Location, Value l, ValueRange acc) {
                                     OpBuilder::InsertionGuard guard(b);
                                     b.setInsertionPoint(nested.getInsertionBlock(),
                                                         nested.getInsertionPoint());
                                     scf::YieldOp::create(b, step(l, acc));
                                   });
    return SmallVector<Value>(loop.getResults());
  }
  /// An f32 buffer of `shape` on the function's stack, cache-line aligned.
  Value stackBuffer(ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(b, MemRefType::get(shape, b.getF32Type()),
                                    b.getI64IntegerAttr(kLineBytes));
  }

  int64_t w;
};

/// `func.func @<kernel>[_<phase>]_tile(args..., index x rank) -> i32` with
/// its C interface, before `kernel`: one phase's item function.
func::FuncOp createTileFunction(ImplicitLocOpBuilder &b, KernelOp kernel, ArrayRef<Type> args,
                                StringRef phase, int64_t rank);

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_LOOPBUILDER_H
