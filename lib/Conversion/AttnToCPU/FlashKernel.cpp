//===- FlashKernel.cpp - attn.flash to an x86-64 tile function -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The loops that carry out attn.flash's recurrence (documented on the op) on
// x86-64 SIMD. The tile function computes rows [q0, q0 + rows) of one
// (batch, head). Query rows run along the vector lanes, so the softmax of a
// whole vector of rows is a handful of vector ops:
//
//   Q^T = scale * q[rows]^T                   (Dp x blockQ, zero padded; once)
//   for each visited KV tile [k0, k0 + cols) within the mask's key range
//   (the walk classifies tiles with TileClassifier and skips empty ones; the
//   next visited tile's k and v rows are prefetched during this one):
//     S^T[j, :] = sum_d k[j, d] * Q^T[d, :]   (k read in place, broadcast;
//                                              a qkKeys x qkRowVectors register
//                                              block from the target)
//     partial / edge tiles, or a score_mod:   per element score_mod, mask,
//                                             mask_mod, invalid keys -> -inf
//                                             (window masks without mods: on
//                                             vectors of rows)
//     online softmax, per vector of rows:     m' = max(m, max_j S^T[j, :]),
//                                             P^T = exp(S^T - m'),
//                                             l = l e^(m - m') + sum_j P^T
//                                             (plain max, exp for x <= 0)
//     acc[i, :] = acc[i, :] e^(m - m') + sum_j P[i, j] v[k0 + j, :]
//                                             (v read in place; a pvRows x
//                                             pvVectors register block)
//   out = acc / l, lse = m + log l; rows with l == 0 give out = 0, lse = -inf
//
// Dp is head_dim rounded up to the vector width; padding is zero, so it never
// changes a dot product. f16 / bf16 tensors are widened to f32 as they are
// read, or, for bf16 on AVX512-BF16, Q K^T and P V run on bf16 pairs
// (FlashBf16Dot.cpp); everything else is f32. Integer divisions inside inlined mods are guarded: a
// zero divisor sets the function's status to 1 instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"

#include "FlashKernelBuilder.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

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

/// (full, empty) of KV tile `kTile` for this query tile.
std::pair<Value, Value> FlashKernelBuilder::classifyKvTile(Value kTile) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), b.create<arith::SubIOp>(seqKv, k0));
  TileBounds<Value> bounds{q0, add(q0, rows), k0, add(k0, cols), seqQ, seqKv};
  return emitTileClass(b, b.getLoc(), module, op.getMask(), !op.getMaskMod().empty(),
                       bounds);
}

/// The first KV tile in [from, end) that the mask does not skip, or end.
Value FlashKernelBuilder::nextVisitedTile(Value from, Value end) {
  Type index = b.getIndexType();
  auto scan = b.create<scf::WhileOp>(TypeRange{index}, ValueRange{from});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&scan.getBefore(), {}, {index}, {b.getLoc()});
  Value t = before->getArgument(0);
  Value skip = select(lt(t, end), b.getI1Type(), [&] { return classifyKvTile(t).second; },
                      [&] { return b.create<arith::ConstantIntOp>(0, 1).getResult(); });
  b.create<scf::ConditionOp>(skip, ValueRange{t});
  Block *after = b.createBlock(&scan.getAfter(), {}, {index}, {b.getLoc()});
  b.create<scf::YieldOp>(ValueRange{add(after->getArgument(0), idx(1))});
  return scan.getResult(0);
}

/// One visited KV tile: scores, mods and mask where needed, online softmax,
/// P V; the rows of KV tile `nextKvTile` are prefetched meanwhile if `hasNext`.
void FlashKernelBuilder::visitTile(Value kTile, Value hasNext, Value nextKvTile,
                                   StringRef counterName) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), b.create<arith::SubIOp>(seqKv, k0));
  Value full = classifyKvTile(kTile).first;
  // The v rows of a next tile that follows this one go with its k rows (the
  // hardware prefetcher streams those: dense is 1-2% faster so); those of a
  // jump are spread over P V, see prefetchValueRows.
  hasNextTile = hasNext;
  nextK0 = mul(nextKvTile, idx(blockKv));
  Value adjacent = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, nextK0,
                                           add(k0, idx(blockKv)));
  valuesInScores = b.create<arith::AndIOp>(hasNext, adjacent);
  valuesInPV = b.create<arith::AndIOp>(hasNext, notI1(adjacent));
  if (cfg.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    Value counter = b.create<memref::GetGlobalOp>(type, counterName);
    b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::addi,
                                  b.create<arith::ConstantIntOp>(1, 64), counter,
                                  ValueRange{idx(0)});
  }
  if (dot) {
    packValuePairs(k0, cols);
    computeScoresDot(k0, cols);
  } else {
    if (widen)
      widenKvTile(k0, cols);
    computeScores(k0, cols);
  }
  Value edge = lt(cols, idx(blockKv));
  bool needsElementPass = !op.getScoreMod().empty();
  Value elementPass = b.create<arith::OrIOp>(
      b.create<arith::OrIOp>(edge, notI1(full)),
      b.create<arith::ConstantIntOp>(needsElementPass, 1));
  ifThen(elementPass, [&] { applyModsAndMask(q0, k0, cols, full); });
  onlineSoftmax();
  if (dot)
    accumulatePVDot(cols);
  else
    accumulatePV(k0, cols);
}

/// Prefetches every cache line of row `row` (in range) of a tensor.
void FlashKernelBuilder::prefetchRow(Value buf, const Strides &strides, Value headIdx,
                                     Value row) {
  Value base = offset(strides, batch, headIdx, row);
  int64_t perLine = kLineBytes * 8 / elemType.getIntOrFloatBitWidth();
  for (int64_t d = 0; d < dim; d += perLine)
    b.create<memref::PrefetchOp>(buf, ValueRange{add(base, idx(d))}, /*isWrite=*/false,
                                 /*localityHint=*/3, /*isDataCache=*/true);
}

/// During row block `rowBlock` of `rowBlocks` of P V: its share of the next
/// visited tile's v rows (clamped to the last key). Spread over P V, where the
/// k rows' are spread over the scores: bursts of misses to DRAM (BigBird's
/// random tiles) fill the miss buffers and stall the loads in the loops.
void FlashKernelBuilder::prefetchValueRows(Value rowBlock, int64_t rowBlocks) {
  ifThen(valuesInPV, [&] {
    int64_t perBlock = llvm::divideCeil(blockKv, rowBlocks);
    Value first = add(nextK0, mul(rowBlock, idx(perBlock)));
    Value lastKey = b.create<arith::SubIOp>(seqKv, idx(1));
    for (int64_t r = 0; r < perBlock; ++r)
      prefetchRow(vBuf, vS, kvHead, minIdx(add(first, idx(r)), lastKey));
  });
}

/// KF / VF rows j = the tile's k / v rows k0 + j in f32; rows past the
/// sequence repeat its last key (finite; the mask drops them, and P = 0 there).
/// One conversion per element per query tile, against blockQ uses of it.
void FlashKernelBuilder::widenKvTile(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth, dimFull = dim / w * w;
  Value lastKey = b.create<arith::SubIOp>(cols, idx(1));
  loop(0, blockKv, 1, [&](Value j) {
    Value key = add(k0, minIdx(j, lastKey));
    Value to = mul(j, idx(dimPadded));
    for (auto [src, strides, dst] : {std::tuple{kBuf, kS, KF}, std::tuple{vBuf, vS, VF}}) {
      Value from = offset(strides, batch, kvHead, key);
      for (int64_t d = 0; d < dimFull; d += w) {
        Value x = b.create<vector::LoadOp>(elemVecType(), src, ValueRange{add(from, idx(d))});
        b.create<vector::StoreOp>(toF32(b, b.getLoc(), x), dst, ValueRange{add(to, idx(d))});
      }
      for (int64_t d = dimFull; d < dim; ++d) {
        Value x = b.create<memref::LoadOp>(src, ValueRange{add(from, idx(d))});
        b.create<memref::StoreOp>(toF32(b, b.getLoc(), x), dst, ValueRange{add(to, idx(d))});
      }
    }
  });
}

Value FlashKernelBuilder::fromF32(Value x) {
  if (elemType.isF32())
    return x;
  if (!elemType.isBF16() || cfg.bf16Dot)
    return b.create<arith::TruncFOp>(elemType, x); // vcvtps2ph / vcvtneps2bf16
  // Without AVX512-BF16, LLVM calls __truncsfbf2, which libgcc before 13
  // lacks: round the f32 bits to nearest even by hand; NaN stays a quiet NaN.
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return b.create<arith::ConstantIntOp>(v, 32); };
  Value bits = b.create<arith::BitcastOp>(i32, x);
  Value odd = b.create<arith::AndIOp>(b.create<arith::ShRUIOp>(bits, c(16)), c(1));
  Value rounded = b.create<arith::ShRUIOp>(
      b.create<arith::AddIOp>(bits, b.create<arith::AddIOp>(odd, c(0x7fff))), c(16));
  Value isNan = b.create<arith::CmpFOp>(arith::CmpFPredicate::UNO, x, x);
  Value half = b.create<arith::SelectOp>(isNan, c(0x7fc0), rounded);
  return b.create<arith::BitcastOp>(elemType,
                                    b.create<arith::TruncIOp>(b.getI16Type(), half));
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
      Value x = b.create<arith::MulFOp>(acc, factor);
      x = fromF32(x);
      b.create<memref::StoreOp>(x, outBuf, add(base, d));
    });
    if (wantLse) {
      Value m = b.create<memref::LoadOp>(M, ValueRange{i});
      if (base2Scores)
        m = b.create<arith::MulFOp>(m, f32(0.693147180559945309));
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
  vBatchHead = offset(vS, batch, kvHead, idx(0));
  lseS = readStrides(ATTNC_P_LSE_STRIDES);
  q0 = mul(qTile, idx(blockQ));
  rows = minIdx(idx(blockQ), b.create<arith::SubIOp>(seqQ, q0));

  Type f32Type = b.getF32Type();
  if (!dot)
    QT = stackBuffer({dimPadded, blockQ}, f32Type);
  ST = stackBuffer({blockKv, blockQ}, f32Type);
  Acc = stackBuffer({blockQ, dimPadded}, f32Type);
  M = stackBuffer({blockQ}, f32Type);
  L = stackBuffer({blockQ}, f32Type);
  ALPHA = stackBuffer({blockQ}, f32Type);
  status = stackBuffer({1}, b.getI32Type());
  if (widen) {
    // Zero once: the padding columns [dim, dimPadded) are never written.
    KF = stackBuffer({blockKv * dimPadded}, f32Type);
    VF = stackBuffer({blockKv * dimPadded}, f32Type);
    loop(0, blockKv * dimPadded, 1, [&](Value i) {
      for (Value buf : {KF, VF})
        b.create<memref::StoreOp>(f32(0), buf, ValueRange{i});
    });
  }
  b.create<memref::StoreOp>(b.create<arith::ConstantIntOp>(0, 32), status, ValueRange{idx(0)});
  if (dot) {
    Type bf16 = b.getBF16Type();
    QP = stackBuffer({dim / 2, 2 * blockQ}, bf16);
    VP = stackBuffer({blockKv / 2, 2 * dimPadded}, bf16);
    PB = stackBuffer({blockKv / 2, 2 * blockQ}, bf16);
    // Zero once: VP's padding columns (head_dim past dim) are never written.
    loop(0, blockKv / 2, 1, [&](Value jp) {
      loop(0, 2 * dimPadded, 1, [&](Value c) {
        b.create<memref::StoreOp>(b.create<arith::ConstantOp>(b.getZeroAttr(bf16)), VP,
                                  ValueRange{jp, c});
      });
    });
    packQueryPairs();
  } else {
    loadQueryTile();
  }
  zeroFill(Acc, {blockQ, dimPadded});
  loop(0, blockQ, 1, [&](Value i) {
    b.create<memref::StoreOp>(negInf(), M, ValueRange{i});
    b.create<memref::StoreOp>(f32(0), L, ValueRange{i});
  });

  // Only the KV tiles that can hold a kept key are classified at all: a
  // window's query tile costs O(window), not O(seq_kv).
  auto [keyLo, keyHi] =
      emitKeyRange(b, b.getLoc(), op.getMask(), q0, add(q0, rows), seqQ, seqKv);
  Value firstKvTile = b.create<arith::FloorDivSIOp>(
      b.create<arith::MaxSIOp>(keyLo, idx(0)), idx(blockKv));
  Value endKvTile = b.create<arith::CeilDivSIOp>(
      b.create<arith::MaxSIOp>(b.create<arith::MinSIOp>(keyHi, seqKv), idx(0)),
      idx(blockKv));
  // Visited tiles in order; while one is computed, the next one's k and v rows
  // are prefetched. Sparse masks visit few tiles per query tile, scattered or
  // not touched before, which demand misses otherwise fetch from DRAM (BigBird
  // at seq 8192: 71% -> 76% of the peak; dense gains ~1%, its next tile being
  // mostly in the hardware prefetcher's stream already).
  Value firstVisited = nextVisitedTile(firstKvTile, endKvTile);
  auto walk = b.create<scf::WhileOp>(TypeRange{b.getIndexType()}, ValueRange{firstVisited});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&walk.getBefore(), {}, {b.getIndexType()}, {b.getLoc()});
    Value cur = before->getArgument(0);
    b.create<scf::ConditionOp>(lt(cur, endKvTile), ValueRange{cur});
    Block *after = b.createBlock(&walk.getAfter(), {}, {b.getIndexType()}, {b.getLoc()});
    cur = after->getArgument(0);
    Value next = nextVisitedTile(add(cur, idx(1)), endKvTile);
    visitTile(cur, lt(next, endKvTile), next, counterName);
    b.create<scf::YieldOp>(ValueRange{next});
  }
  writeOutputs();
  b.create<func::ReturnOp>(ValueRange{b.create<memref::LoadOp>(status, ValueRange{idx(0)})});
}

FailureOr<func::FuncOp>
mlir::attn::buildCpuFlashKernel(KernelOp kernel, const CpuKernelConfig &config) {
  FlashOp op = kernel.getFlash();
  if (!op)
    return kernel.emitOpError("expects its tiled form, attn.flash; run "
                              "attn-tile-flash first");
  Type elem = op.getDtype();
  if (!elem.isF32() && !elem.isF16() && !elem.isBF16())
    return op.emitOpError("the CPU backend supports dtypes f32, f16 and bf16, got ")
           << elem;
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"block_q", op.getTileQ()},
                             {"block_kv", op.getTileKv()}})
    if (size % config.vectorWidth != 0)
      return op.emitOpError()
             << name << " (" << size
             << ") must be a multiple of the CPU target's vector width ("
             << config.vectorWidth << " f32 lanes)";

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
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, elem);
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type index = b.getIndexType();
  auto type = FunctionType::get(
      ctx, {elemBuf, elemBuf, elemBuf, elemBuf, f32Buf, i64Buf, index, index, index},
      {b.getI32Type()});
  auto func = b.create<func::FuncOp>(name, type);
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  ImplicitLocOpBuilder body(op.getLoc(), ctx);
  FlashKernelBuilder(op, config, body).build(func, counter);
  return func;
}
