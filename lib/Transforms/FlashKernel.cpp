//===- FlashKernel.cpp - builds the tiled Flash form of one kernel --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile function computes rows [q0, q0 + rows) of one (batch, head):
//
//   Q  = scale * q[rows]                      (blockQ x Dp, zero padded)
//   for each KV tile [k0, k0 + cols):
//     classify the tile (TileClassifier); empty tiles are skipped
//     K^T, V  <- the tile                     (Dp x blockKv, blockKv x Dp)
//     S = Q K^T                               (vector FMAs over keys)
//     partial / edge tiles, or a score_mod:   per element score_mod, mask,
//                                             mask_mod, invalid keys -> -inf
//     online softmax: m' = max(m, rowmax S), P = exp(S - m'),
//                     l = l e^(m - m') + sum P, acc = acc e^(m - m') + P V
//   out = acc / l, lse = m + log l; rows with l == 0 give out = 0, lse = -inf
//
// Dp is head_dim rounded up to the vector width. Padding is zero, so it never
// changes a dot product. Integer divisions inside inlined mods are guarded:
// a zero divisor sets the function's status to 1 instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/FlashKernel.h"

#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

int64_t mlir::attn::defaultBlockQ(int64_t headDim) {
  return headDim > 128 ? 32 : 64;
}

namespace {

/// (batch, head, seq) strides of one tensor, read from the params array.
struct Strides {
  Value batch, head, seq;
};

class FlashKernelBuilder {
public:
  FlashKernelBuilder(AttentionOp op, const FlashConfig &config,
                     ImplicitLocOpBuilder &b)
      : op(op), cfg(config), b(b), dim(op.getDim()),
        dimPadded((dim + config.vectorWidth - 1) / config.vectorWidth *
                  config.vectorWidth) {}

  void build(func::FuncOp func, StringRef counterName);

private:
  // Small builders.
  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }
  Value f32(float v) { return b.create<arith::ConstantFloatOp>(b.getF32Type(), APFloat(v)); }
  Value negInf() { return f32(-std::numeric_limits<float>::infinity()); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(x, y); }
  Value minIdx(Value x, Value y) { return b.create<arith::MinSIOp>(x, y); }
  Value lt(Value x, Value y) {
    return b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, x, y);
  }
  VectorType vecType() { return VectorType::get({cfg.vectorWidth}, b.getF32Type()); }
  Value stackBuffer(ArrayRef<int64_t> shape, Type elem) {
    return b.create<memref::AllocaOp>(MemRefType::get(shape, elem));
  }
  template <typename Fn> void loop(Value lo, Value hi, int64_t step, Fn body) {
    b.create<scf::ForOp>(lo, hi, idx(step), ValueRange{},
                         [&](OpBuilder &nested, Location loc, Value iv, ValueRange) {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPoint(nested.getInsertionBlock(),
                                               nested.getInsertionPoint());
                           body(iv);
                           b.create<scf::YieldOp>();
                         });
  }
  template <typename Fn> void loop(int64_t lo, Value hi, int64_t step, Fn body) {
    loop(idx(lo), hi, step, body);
  }
  template <typename Fn> void loop(int64_t lo, int64_t hi, int64_t step, Fn body) {
    loop(idx(lo), idx(hi), step, body);
  }
  template <typename Fn> void ifThen(Value cond, Fn body) {
    auto ifOp = b.create<scf::IfOp>(cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }
  /// scf.if yielding one value of `type` from each branch.
  template <typename Then, typename Else>
  Value select(Value cond, Type type, Then thenFn, Else elseFn) {
    auto ifOp = b.create<scf::IfOp>(TypeRange{type}, cond, true, true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      b.create<scf::YieldOp>(thenFn());
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      b.create<scf::YieldOp>(elseFn());
    }
    return ifOp.getResult(0);
  }

  // Pieces of the kernel.
  Value readParam(int64_t index);
  Strides readStrides(int64_t first);
  Value offset(const Strides &s, Value batch, Value head, Value row);
  void loadQueryTile();
  void zeroFill(Value buffer, ArrayRef<int64_t> shape);
  void loadKvTile(Value k0, Value cols);
  void computeScores();
  void applyModsAndMask(Value q0, Value k0, Value cols, Value full);
  Value inlineMod(Region &region, ArrayRef<Value> args);
  void onlineSoftmax();
  void accumulatePV(Value cols);
  void writeOutputs();

  AttentionOp op;
  FlashConfig cfg;
  ImplicitLocOpBuilder &b;
  int64_t dim, dimPadded;

  ModuleOp module;
  // Function arguments and values shared by the pieces.
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, params, batch, head, kvHead;
  Value seqQ, seqKv, q0, rows;
  Strides qS, kS, vS, outS, lseS;
  Value Q, KT, V, S, Acc, M, L, status;
};

Value FlashKernelBuilder::readParam(int64_t index) {
  Value v = b.create<memref::LoadOp>(params, idx(index));
  return b.create<arith::IndexCastOp>(b.getIndexType(), v);
}

Strides FlashKernelBuilder::readStrides(int64_t first) {
  return {readParam(first), readParam(first + 1), readParam(first + 2)};
}

Value FlashKernelBuilder::offset(const Strides &s, Value bIdx, Value hIdx,
                                 Value row) {
  return add(add(mul(bIdx, s.batch), mul(hIdx, s.head)), mul(row, s.seq));
}

void FlashKernelBuilder::zeroFill(Value buffer, ArrayRef<int64_t> shape) {
  Value zero = f32(0);
  loop(0, shape[0], 1, [&](Value i) {
    loop(0, shape[1], 1, [&](Value j) {
      b.create<memref::StoreOp>(zero, buffer, ValueRange{i, j});
    });
  });
}

/// Q = scale * q rows; rows past the sequence and columns past head_dim stay 0.
void FlashKernelBuilder::loadQueryTile() {
  zeroFill(Q, {cfg.blockQ, dimPadded});
  Value scale = f32(op.getScaleAttr().getValueAsDouble());
  loop(0, rows, 1, [&](Value i) {
    Value base = offset(qS, batch, head, add(q0, i));
    loop(0, dim, 1, [&](Value d) {
      Value x = b.create<memref::LoadOp>(qBuf, add(base, d));
      b.create<memref::StoreOp>(b.create<arith::MulFOp>(x, scale), Q, ValueRange{i, d});
    });
  });
}

/// K^T and V of keys [k0, k0 + cols). Entries past `cols` keep the previous
/// tile's (finite) values; their scores are masked to -inf, so P is 0 there.
void FlashKernelBuilder::loadKvTile(Value k0, Value cols) {
  loop(0, cols, 1, [&](Value j) {
    Value kBase = offset(kS, batch, kvHead, add(k0, j));
    Value vBase = offset(vS, batch, kvHead, add(k0, j));
    loop(0, dim, 1, [&](Value d) {
      b.create<memref::StoreOp>(b.create<memref::LoadOp>(kBuf, add(kBase, d)), KT,
                                ValueRange{d, j});
      b.create<memref::StoreOp>(b.create<memref::LoadOp>(vBuf, add(vBase, d)), V,
                                ValueRange{j, d});
    });
  });
}

/// S[i, j..j+W) = sum_d Q[i, d] * K^T[d, j..j+W): one broadcast and one FMA
/// per step, keys along the vector lanes.
void FlashKernelBuilder::computeScores() {
  loop(0, rows, 1, [&](Value i) {
    loop(0, cfg.blockKv, cfg.vectorWidth, [&](Value j) {
      Value zero = b.create<arith::ConstantOp>(
          DenseElementsAttr::get(vecType(), b.getF32FloatAttr(0)));
      auto dot = b.create<scf::ForOp>(
          idx(0), idx(dimPadded), idx(1), ValueRange{zero},
          [&](OpBuilder &nb, Location loc, Value d, ValueRange acc) {
            Value qv = nb.create<memref::LoadOp>(loc, Q, ValueRange{i, d});
            Value qb = nb.create<vector::BroadcastOp>(loc, vecType(), qv);
            Value kv = nb.create<vector::LoadOp>(loc, vecType(), KT, ValueRange{d, j});
            nb.create<scf::YieldOp>(loc, nb.create<vector::FMAOp>(loc, qb, kv, acc[0]).getResult());
          });
      b.create<vector::StoreOp>(dot.getResult(0), S, ValueRange{i, j});
    });
  });
}

/// Clones a score_mod / mask_mod body at the insertion point with its block
/// arguments bound to `args`; returns the yielded value.
Value FlashKernelBuilder::inlineMod(Region &region, ArrayRef<Value> args) {
  IRMapping map;
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    map.map(arg, value);
  for (Operation &inner : block.without_terminator()) {
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp>(inner)) {
      // Guard: a zero divisor would trap. Record it and divide by 1 instead.
      Value divisor = map.lookup(inner.getOperand(1));
      Value zero = b.create<arith::ConstantOp>(b.getZeroAttr(divisor.getType()));
      Value one = b.create<arith::ConstantOp>(b.getOneAttr(divisor.getType()));
      Value isZero = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, divisor, zero);
      ifThen(isZero, [&] {
        b.create<memref::StoreOp>(
            b.create<arith::ConstantIntOp>(1, 32), status, ValueRange{idx(0)});
      });
      map.map(inner.getOperand(1), b.create<arith::SelectOp>(isZero, one, divisor));
      b.clone(inner, map);
      map.map(inner.getOperand(1), divisor);
      continue;
    }
    b.clone(inner, map);
  }
  return map.lookup(block.getTerminator()->getOperand(0));
}

/// Per element of a partial or edge tile (or any tile with a score_mod):
/// S = keep ? score_mod(S) : -inf.
void FlashKernelBuilder::applyModsAndMask(Value q0v, Value k0, Value cols,
                                          Value full) {
  loop(0, rows, 1, [&](Value i) {
    Value qPos = add(q0v, i);
    loop(0, cfg.blockKv, 1, [&](Value j) {
      Value kPos = add(k0, j);
      Value score = select(lt(j, cols), b.getF32Type(), [&] {
        Value s = b.create<memref::LoadOp>(S, ValueRange{i, j});
        if (!op.getScoreMod().empty())
          s = inlineMod(op.getScoreMod(), {s, batch, head, qPos, kPos});
        Value keep = select(full, b.getI1Type(),
            [&] { return b.create<arith::ConstantIntOp>(1, 1).getResult(); },
            [&] {
              Value k = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), qPos, kPos, seqQ, seqKv);
              if (!op.getMaskMod().empty())
                k = b.create<arith::AndIOp>(
                    k, inlineMod(op.getMaskMod(), {batch, head, qPos, kPos}));
              return k;
            });
        return b.create<arith::SelectOp>(keep, s, negInf()).getResult();
      }, [&] { return negInf(); });
      b.create<memref::StoreOp>(score, S, ValueRange{i, j});
    });
  });
}

/// m' = max(m, rowmax S); P = exp(S - m') in place of S; l and acc rescaled by
/// exp(m - m'). A row with nothing kept so far (m' = -inf) gets P = 0.
void FlashKernelBuilder::onlineSoftmax() {
  int64_t w = cfg.vectorWidth;
  loop(0, rows, 1, [&](Value i) {
    Value rowMax = negInf();
    for (int64_t j = 0; j < cfg.blockKv; j += w) {
      Value s = b.create<vector::LoadOp>(vecType(), S, ValueRange{i, idx(j)});
      rowMax = b.create<arith::MaximumFOp>(
          rowMax, b.create<vector::ReductionOp>(vector::CombiningKind::MAXIMUMF, s));
    }
    Value mOld = b.create<memref::LoadOp>(M, ValueRange{i});
    Value mNew = b.create<arith::MaximumFOp>(mOld, rowMax);
    Value dead = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, mNew, negInf());
    auto ifOp = b.create<scf::IfOp>(dead, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value zeros = b.create<arith::ConstantOp>(DenseElementsAttr::get(vecType(), b.getF32FloatAttr(0)));
    for (int64_t j = 0; j < cfg.blockKv; j += w)
      b.create<vector::StoreOp>(zeros, S, ValueRange{i, idx(j)});
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    Value alpha = b.create<math::ExpOp>(b.create<arith::SubFOp>(mOld, mNew));
    Value mVec = b.create<vector::BroadcastOp>(vecType(), mNew);
    Value sum = f32(0);
    for (int64_t j = 0; j < cfg.blockKv; j += w) {
      Value s = b.create<vector::LoadOp>(vecType(), S, ValueRange{i, idx(j)});
      Value p = b.create<math::ExpOp>(b.create<arith::SubFOp>(s, mVec));
      b.create<vector::StoreOp>(p, S, ValueRange{i, idx(j)});
      sum = b.create<arith::AddFOp>(sum, b.create<vector::ReductionOp>(vector::CombiningKind::ADD, p));
    }
    Value lOld = b.create<memref::LoadOp>(L, ValueRange{i});
    b.create<memref::StoreOp>(b.create<math::FmaOp>(lOld, alpha, sum), L, ValueRange{i});
    b.create<memref::StoreOp>(mNew, M, ValueRange{i});
    Value alphaVec = b.create<vector::BroadcastOp>(vecType(), alpha);
    for (int64_t d = 0; d < dimPadded; d += w) {
      Value acc = b.create<vector::LoadOp>(vecType(), Acc, ValueRange{i, idx(d)});
      b.create<vector::StoreOp>(b.create<arith::MulFOp>(acc, alphaVec), Acc, ValueRange{i, idx(d)});
    }
  });
}

/// Acc[i, d..d+W) += P[i, j] * V[j, d..d+W).
void FlashKernelBuilder::accumulatePV(Value cols) {
  loop(0, rows, 1, [&](Value i) {
    loop(0, cols, 1, [&](Value j) {
      Value p = b.create<vector::BroadcastOp>(
          vecType(), b.create<memref::LoadOp>(S, ValueRange{i, j}));
      for (int64_t d = 0; d < dimPadded; d += cfg.vectorWidth) {
        Value acc = b.create<vector::LoadOp>(vecType(), Acc, ValueRange{i, idx(d)});
        Value v = b.create<vector::LoadOp>(vecType(), V, ValueRange{j, idx(d)});
        b.create<vector::StoreOp>(b.create<vector::FMAOp>(p, v, acc), Acc, ValueRange{i, idx(d)});
      }
    });
  });
}

void FlashKernelBuilder::writeOutputs() {
  // `out` is always written (the C ABI always takes it, see TileFlash.cpp).
  bool wantLse = op.hasOutput(OutputKind::lse);
  loop(0, rows, 1, [&](Value i) {
    Value l = b.create<memref::LoadOp>(L, ValueRange{i});
    Value empty = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, l, f32(0));
    Value row = add(q0, i);
    Value inv = b.create<arith::DivFOp>(f32(1), l);
    Value factor = b.create<arith::SelectOp>(empty, f32(0), inv);
    Value base = offset(outS, batch, head, row);
    loop(0, dim, 1, [&](Value d) {
      Value acc = b.create<memref::LoadOp>(Acc, ValueRange{i, d});
      b.create<memref::StoreOp>(b.create<arith::MulFOp>(acc, factor), outBuf, add(base, d));
    });
    if (wantLse) {
      Value m = b.create<memref::LoadOp>(M, ValueRange{i});
      Value lse = b.create<arith::AddFOp>(m, b.create<math::LogOp>(l));
      b.create<memref::StoreOp>(b.create<arith::SelectOp>(empty, negInf(), lse), lseBuf,
                                offset(lseS, batch, head, row));
    }
  });
}

void FlashKernelBuilder::build(func::FuncOp func, StringRef counterName) {
  module = func->getParentOfType<ModuleOp>();
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  params = args[5], batch = args[6], head = args[7];
  Value qTile = args[8];
  kvHead = b.create<arith::DivUIOp>(head, idx(op.getHeads() / op.getKvHeads()));
  seqQ = readParam(ATTNC_P_SEQ_Q);
  seqKv = readParam(ATTNC_P_SEQ_KV);
  qS = readStrides(ATTNC_P_Q_STRIDES);
  kS = readStrides(ATTNC_P_K_STRIDES);
  vS = readStrides(ATTNC_P_V_STRIDES);
  outS = readStrides(ATTNC_P_OUT_STRIDES);
  lseS = readStrides(ATTNC_P_LSE_STRIDES);
  q0 = mul(qTile, idx(cfg.blockQ));
  rows = minIdx(idx(cfg.blockQ), b.create<arith::SubIOp>(seqQ, q0));

  Type f32Type = b.getF32Type();
  Q = stackBuffer({cfg.blockQ, dimPadded}, f32Type);
  KT = stackBuffer({dimPadded, cfg.blockKv}, f32Type);
  V = stackBuffer({cfg.blockKv, dimPadded}, f32Type);
  S = stackBuffer({cfg.blockQ, cfg.blockKv}, f32Type);
  Acc = stackBuffer({cfg.blockQ, dimPadded}, f32Type);
  M = stackBuffer({cfg.blockQ}, f32Type);
  L = stackBuffer({cfg.blockQ}, f32Type);
  status = stackBuffer({1}, b.getI32Type());
  b.create<memref::StoreOp>(b.create<arith::ConstantIntOp>(0, 32), status, ValueRange{idx(0)});
  loadQueryTile();
  zeroFill(KT, {dimPadded, cfg.blockKv});
  zeroFill(V, {cfg.blockKv, dimPadded});
  zeroFill(Acc, {cfg.blockQ, dimPadded});
  loop(0, cfg.blockQ, 1, [&](Value i) {
    b.create<memref::StoreOp>(negInf(), M, ValueRange{i});
    b.create<memref::StoreOp>(f32(0), L, ValueRange{i});
  });

  Value numKvTiles = b.create<arith::CeilDivSIOp>(seqKv, idx(cfg.blockKv));
  bool needsElementPass = !op.getScoreMod().empty();
  loop(0, numKvTiles, 1, [&](Value kTile) {
    Value k0 = mul(kTile, idx(cfg.blockKv));
    Value cols = minIdx(idx(cfg.blockKv), b.create<arith::SubIOp>(seqKv, k0));
    TileBounds<Value> bounds{q0, add(q0, rows), k0, add(k0, cols), seqQ, seqKv};
    auto [full, empty] = emitTileClass(b, b.getLoc(), module, op.getMask(),
                                       !op.getMaskMod().empty(), bounds);
    Value visit = b.create<arith::XOrIOp>(empty, b.create<arith::ConstantIntOp>(1, 1));
    ifThen(visit, [&] {
      if (cfg.countTiles) {
        auto type = MemRefType::get({1}, b.getI64Type());
        Value counter = b.create<memref::GetGlobalOp>(type, counterName);
        b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::addi,
                                      b.create<arith::ConstantIntOp>(1, 64), counter,
                                      ValueRange{idx(0)});
      }
      loadKvTile(k0, cols);
      computeScores();
      Value edge = lt(cols, idx(cfg.blockKv));
      Value elementPass = b.create<arith::OrIOp>(
          b.create<arith::OrIOp>(edge, b.create<arith::XOrIOp>(full, b.create<arith::ConstantIntOp>(1, 1))),
          b.create<arith::ConstantIntOp>(needsElementPass, 1));
      ifThen(elementPass, [&] { applyModsAndMask(q0, k0, cols, full); });
      onlineSoftmax();
      accumulatePV(cols);
    });
  });
  writeOutputs();
  b.create<func::ReturnOp>(ValueRange{b.create<memref::LoadOp>(status, ValueRange{idx(0)})});
}

} // namespace

FailureOr<func::FuncOp> mlir::attn::buildFlashKernel(KernelOp kernel,
                                                     const FlashConfig &config) {
  AttentionOp op = kernel.getAttention();
  if (!op.getDtype().isF32())
    return op.emitOpError("the CPU backend supports dtype f32 only, got ")
           << op.getDtype();
  if (op.hasOutput(OutputKind::weights))
    return op.emitOpError("output 'weights' is only produced by the reference "
                          "evaluator (attnc-run --reference)");
  if (!op.getScaleAttr() || !op.getNumKvHeadsAttr() ||
      isa<CausalMaskAttr>(op.getMask()))
    return op.emitOpError("expects a normalized spec; run attn-normalize first");

  MLIRContext *ctx = kernel.getContext();
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  std::string name = (kernel.getSymName() + "_tile").str();
  std::string counter = (kernel.getSymName() + "_tiles_visited").str();
  if (config.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    b.create<memref::GlobalOp>(
        counter, b.getStringAttr("public"), type,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()), int64_t(0)),
        /*constant=*/false, /*alignment=*/nullptr);
  }
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type index = b.getIndexType();
  auto type = FunctionType::get(
      ctx, {f32Buf, f32Buf, f32Buf, f32Buf, f32Buf, i64Buf, index, index, index},
      {b.getI32Type()});
  auto func = b.create<func::FuncOp>(name, type);
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  ImplicitLocOpBuilder body(op.getLoc(), ctx);
  FlashKernelBuilder(op, config, body).build(func, counter);
  return func;
}
