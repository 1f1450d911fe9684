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
//                                             (without a score_mod, on vectors
//                                             of rows and before S^T: then
//                                             S^T, softmax and P V keep to the
//                                             hull of the kept elements,
//                                             FlashMask.cpp)
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
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

void FlashKernelBuilder::zeroFill(Value buffer, ArrayRef<int64_t> shape) {
  Value zero = f32(0);
  loop(0, shape[0], 1, [&](Value i) {
    loop(0, shape[1], 1, [&](Value j) {
      memref::StoreOp::create(b, zero, buffer, ValueRange{i, j});
    });
  });
}

/// (full, empty) of KV tile `kTile` for this query tile: the mask attribute's
/// class, and with a mask_mod the tiles its interval analysis decides (it
/// keeps none: skipped; it keeps all of a full tile: no per-element pass).
std::pair<Value, Value> FlashKernelBuilder::classifyKvTile(Value kTile) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), arith::SubIOp::create(b, seqKv, k0));
  TileBounds<Value> bounds{q0, add(q0, rows), k0, add(k0, cols), seqQ, seqKv};
  auto loadRange = [&](Operation *load, ArrayRef<std::pair<Value, Value>> box) {
    return modInputs.range(b, b.getLoc(), cast<LoadOp>(load), box);
  };
  return attnc::emitTileClassWithMaskMod(b, b.getLoc(), module, op.getMask(),
                                         op.getMaskMod(), bounds, batch, head, head, loadRange);
}

/// The first KV tile in [from, end) that the mask does not skip, or end.
Value FlashKernelBuilder::nextVisitedTile(Value from, Value end) {
  Type index = b.getIndexType();
  auto scan = scf::WhileOp::create(b, TypeRange{index}, ValueRange{from});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&scan.getBefore(), {}, {index}, {b.getLoc()});
  Value t = before->getArgument(0);
  Value skip = select(
      lt(t, end), b.getI1Type(), [&] { return classifyKvTile(t).second; },
      [&] { return arith::ConstantIntOp::create(b, 0, 1).getResult(); });
  scf::ConditionOp::create(b, skip, ValueRange{t});
  Block *after = b.createBlock(&scan.getAfter(), {}, {index}, {b.getLoc()});
  scf::YieldOp::create(b, ValueRange{add(after->getArgument(0), idx(1))});
  return scan.getResult(0);
}

/// One visited KV tile: scores, mods and mask where needed, online softmax,
/// P V; the rows of KV tile `nextKvTile` are prefetched meanwhile if `hasNext`.
void FlashKernelBuilder::visitTile(Value kTile, Value isFirst, Value hasNext,
                                   Value nextKvTile, StringRef counterName) {
  Value k0 = mul(kTile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), arith::SubIOp::create(b, seqKv, k0));
  Value full = classifyKvTile(kTile).first;
  // The v rows of a next tile that follows this one go with its k rows (the
  // hardware prefetcher streams those: dense is 1-2% faster so); those of a
  // jump are spread over P V, see prefetchValueRows.
  hasNextTile = hasNext;
  nextK0 = mul(nextKvTile, idx(blockKv));
  Value adjacent =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, nextK0, add(k0, idx(blockKv)));
  valuesInScores = arith::AndIOp::create(b, hasNext, adjacent);
  valuesInPV = arith::AndIOp::create(b, hasNext, notI1(adjacent));
  if (cfg.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    Value counter = memref::GetGlobalOp::create(b, type, counterName);
    memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                arith::ConstantIntOp::create(b, 1, 64), counter,
                                ValueRange{idx(0)});
  }
  Value edge = lt(cols, idx(blockKv));
  bool needsElementPass = !op.getScoreMod().empty();
  Value elementPass = arith::OrIOp::create(b, arith::OrIOp::create(b, edge, notI1(full)),
                                           arith::ConstantIntOp::create(b, needsElementPass, 1));
  auto scoresAndSoftmax = [&] {
    maskedScores(k0, cols, full, elementPass);
    onlineSoftmax();
  };
  if (dot)
    packValuePairs(k0, cols);
  else if (widen)
    widenKvTile(k0, cols);
  if (canFuseSoftmax()) {
    wholeTile();
    // The first visited tile sets the rows' max; partial and edge tiles need
    // the element pass between scores and softmax.
    Value tryFused = arith::AndIOp::create(b, notI1(elementPass), notI1(isFirst));
    Value fused = select(
        tryFused, b.getI1Type(), [&] { return fusedScores(k0, cols); },
        [&] { return arith::ConstantIntOp::create(b, 0, 1).getResult(); });
    // A tile that stood kept the rows' max (ALPHA is 1): P V skips the
    // rescale, 1 multiply per 64 FMAs at block_kv 64 (and the P V loops are
    // emitted twice).
    ifThenElse(
        fused, [&] { accumulatePV(k0, cols, /*rescale=*/false); },
        [&] {
          scoresAndSoftmax();
          accumulatePV(k0, cols);
        });
    return;
  }
  scoresAndSoftmax();
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
    memref::PrefetchOp::create(b, buf, ValueRange{add(base, idx(d))}, /*isWrite=*/false,
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
    Value lastKey = arith::SubIOp::create(b, seqKv, idx(1));
    for (int64_t r = 0; r < perBlock; ++r)
      prefetchRow(vBuf, vS, kvHead, minIdx(add(first, idx(r)), lastKey));
  });
}

/// KF / VF rows j = the tile's k / v rows k0 + j in f32; rows past the
/// sequence repeat its last key (finite; the mask drops them, and P = 0 there).
/// One conversion per element per query tile, against blockQ uses of it.
void FlashKernelBuilder::widenKvTile(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth, dimFull = dim / w * w;
  Value lastKey = arith::SubIOp::create(b, cols, idx(1));
  loop(0, blockKv, 1, [&](Value j) {
    Value key = add(k0, minIdx(j, lastKey));
    Value to = mul(j, idx(dimPadded));
    for (auto [src, strides, dst] : {std::tuple{kBuf, kS, KF}, std::tuple{vBuf, vS, VF}}) {
      Value from = offset(strides, batch, kvHead, key);
      for (int64_t d = 0; d < dimFull; d += w) {
        Value x = vector::LoadOp::create(b, elemVecType(), src, ValueRange{add(from, idx(d))});
        vector::StoreOp::create(b, toF32(b, b.getLoc(), x), dst, ValueRange{add(to, idx(d))});
      }
      for (int64_t d = dimFull; d < dim; ++d) {
        Value x = memref::LoadOp::create(b, src, ValueRange{add(from, idx(d))});
        memref::StoreOp::create(b, toF32(b, b.getLoc(), x), dst, ValueRange{add(to, idx(d))});
      }
    }
  });
}

Value mlir::attn::cpu::roundFromF32(OpBuilder &b, Location loc, Value x, Type elemType,
                                    bool nativeBf16) {
  if (elemType.isF32())
    return x;
  if (!elemType.isBF16() || nativeBf16)
    return arith::TruncFOp::create(b, loc, elemType, x); // vcvtps2ph / vcvtneps2bf16
  // Without AVX512-BF16, LLVM calls __truncsfbf2, which libgcc before 13
  // lacks: round the f32 bits to nearest even by hand. A NaN keeps its sign
  // and top bits and is made quiet, as vcvtneps2bf16 does. Neither side of
  // the select is a constant: LLVM would move the cast to bf16 into the
  // select, and x86 selects scalar bf16 as f32, through __truncsfbf2.
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value top = arith::ShRUIOp::create(b, loc, bits, c(16));
  Value odd = arith::AndIOp::create(b, loc, top, c(1));
  Value rounded = arith::ShRUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, arith::AddIOp::create(b, loc, odd, c(0x7fff))),
      c(16));
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value quiet = arith::OrIOp::create(b, loc, top, c(0x40));
  Value half = arith::SelectOp::create(b, loc, isNan, quiet, rounded);
  return arith::BitcastOp::create(b, loc, elemType,
                                  arith::TruncIOp::create(b, loc, b.getI16Type(), half));
}

Value FlashKernelBuilder::fromF32(Value x) {
  return roundFromF32(b, b.getLoc(), x, elemType, cfg.bf16Dot);
}

void FlashKernelBuilder::writeOutputs() {
  // `out` is always written (the C ABI always takes it, see TileFlash.cpp).
  bool wantLse = op.hasOutput(OutputKind::lse);
  loop(0, rows, 1, [&](Value i) {
    Value l = memref::LoadOp::create(b, L, ValueRange{i});
    Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32(0));
    Value row = add(q0, i);
    Value inv = arith::DivFOp::create(b, f32(1), l);
    Value factor = arith::SelectOp::create(b, empty, f32(0), inv);
    Value base = offset(outS, batch, head, row);
    loop(0, dim, 1, [&](Value d) {
      Value acc = memref::LoadOp::create(b, Acc, ValueRange{i, d});
      Value x = arith::MulFOp::create(b, acc, factor);
      x = fromF32(x);
      memref::StoreOp::create(b, x, outBuf, add(base, d));
    });
    if (wantLse) {
      Value m = memref::LoadOp::create(b, M, ValueRange{i});
      if (base2Scores)
        m = arith::MulFOp::create(b, m, f32(0.693147180559945309));
      Value lse = arith::AddFOp::create(b, m, math::LogOp::create(b, l));
      memref::StoreOp::create(b, arith::SelectOp::create(b, empty, negInf(), lse), lseBuf,
                              offset(lseS, batch, head, row));
    }
  });
}

/// varlen: sequence b's rows [cu[b], cu[b + 1]) of the packed tensors; the
/// item's lengths and where each tensor's rows start, instead of the
/// longest lengths and batch strides. With `kvLens` the sequence attends the
/// first kv_lens[b] of its keys (the runtime checked each is within its span).
void FlashKernelBuilder::readSequenceBounds(Value cuQ, Value cuKv, Value kvLens) {
  auto bounds = [&](Value cu, int64_t strideParam) {
    Value stride = readParam(strideParam);
    auto at = [&](Value i) {
      Value x = memref::LoadOp::create(b, cu, ValueRange{mul(i, stride)});
      return arith::IndexCastOp::create(b, b.getIndexType(), x).getResult();
    };
    Value first = at(batch);
    return std::pair{first, arith::SubIOp::create(b, at(add(batch, idx(1))), first).getResult()};
  };
  auto [qFirst, qLen] = bounds(cuQ, ATTNC_P_CU_SEQLENS_Q_STRIDES);
  auto [kvFirst, kvLen] = bounds(cuKv, ATTNC_P_CU_SEQLENS_KV_STRIDES);
  seqQ = qLen;
  seqKv = kvLen;
  if (kvLens) {
    Value at = mul(batch, readParam(ATTNC_P_VARLEN_KV_LENS_STRIDES));
    Value used = memref::LoadOp::create(b, kvLens, ValueRange{at});
    seqKv = arith::IndexCastOp::create(b, b.getIndexType(), used);
  }
  for (Strides *s : {&qS, &outS, &lseS})
    s->start = mul(qFirst, s->seq);
  for (Strides *s : {&kS, &vS})
    s->start = mul(kvFirst, s->seq);
}

void FlashKernelBuilder::build(func::FuncOp func, StringRef counterName) {
  module = func->getParentOfType<ModuleOp>();
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  bool weights = op.hasOutput(OutputKind::weights), varlen = op.getVarlen();
  if (weights)
    weightsBuf = args[5];
  bool kvLens = varlen && op.getPageSize();
  // Mod inputs follow the outputs (prefill kernels only: the verifier says so).
  unsigned firstInput = weights ? 6 : varlen ? (kvLens ? 8 : 7) : 5;
  ArrayAttr inputs = op.getInputsAttr();
  unsigned first = firstInput + (inputs ? inputs.size() : 0);
  params = args[first], batch = args[first + 1], head = args[first + 2];
  Value qTile = args[first + 3];
  modInputs = ModInputViews(b, b.getLoc(), op, args.slice(firstInput, first - firstInput),
                            params, int32_t(firstInput));
  kvHead = arith::DivUIOp::create(b, head, idx(op.getHeads() / op.getKvHeads()));
  readAttentionParams();
  if (varlen)
    readSequenceBounds(args[5], args[6], kvLens ? args[7] : Value());
  q0 = mul(qTile, idx(blockQ));

  Type f32Type = b.getF32Type();
  if (!dot)
    QT = stackBuffer({dimPadded, blockQ}, f32Type);
  if (additive)
    VA = stackBuffer({dimPadded}, f32Type);
  ST = stackBuffer({blockKv, blockQ}, f32Type);
  Acc = stackBuffer({blockQ, dimPadded}, f32Type);
  M = stackBuffer({blockQ}, f32Type);
  L = stackBuffer({blockQ}, f32Type);
  ALPHA = stackBuffer({blockQ}, f32Type);
  if (canFuseSoftmax())
    TSUM = stackBuffer({blockQ}, f32Type);
  status = stackBuffer({1}, b.getI32Type());
  HULL = stackBuffer({4}, b.getIndexType());
  ROWKEYS = stackBuffer({2 * blockQ / cfg.vectorWidth}, b.getIndexType());
  KEPT = stackBuffer({2 * blockQ / cfg.vectorWidth}, b.getIndexType());
  if (widen) {
    KF = stackBuffer({blockKv * dimPadded}, f32Type);
    VF = stackBuffer({blockKv * dimPadded}, f32Type);
  }
  if (dot) {
    Type bf16 = b.getBF16Type();
    QP = stackBuffer({dim / 2, 2 * blockQ}, bf16);
    VP = stackBuffer({blockKv / 2, 2 * dimPadded}, bf16);
    PB = stackBuffer({blockKv / 2, 2 * blockQ}, bf16);
  }
  memref::StoreOp::create(b, arith::ConstantIntOp::create(b, 0, 32), status, ValueRange{idx(0)});
  // The grid of packed sequences spans the longest one: a shorter
  // sequence's items past its end return at once (the buffers above stay in
  // the entry block, where LLVM keeps them static).
  if (varlen)
    ifThen(lt(q0, seqQ), [&] { computeTile(counterName); });
  else
    computeTile(counterName);
  func::ReturnOp::create(b, ValueRange{memref::LoadOp::create(b, status, ValueRange{idx(0)})});
}

void FlashKernelBuilder::computeTile(StringRef counterName) {
  vBatchHead = offset(vS, batch, kvHead, idx(0));
  rows = minIdx(idx(blockQ), arith::SubIOp::create(b, seqQ, q0));
  rowsComputed = mul(arith::CeilDivUIOp::create(b, rows, idx(rowStep())), idx(rowStep()));
  if (widen) {
    // Zero once: the padding columns [dim, dimPadded) are never written.
    loop(0, blockKv * dimPadded, 1, [&](Value i) {
      for (Value buf : {KF, VF})
        memref::StoreOp::create(b, f32(0), buf, ValueRange{i});
    });
  }
  if (dot) {
    // Zero once: VP's padding columns (head_dim past dim) are never written.
    Type bf16 = b.getBF16Type();
    loop(0, blockKv / 2, 1, [&](Value jp) {
      loop(0, 2 * dimPadded, 1, [&](Value c) {
        memref::StoreOp::create(b, arith::ConstantOp::create(b, b.getZeroAttr(bf16)), VP,
                                ValueRange{jp, c});
      });
    });
    packQueryPairs();
  } else {
    loadQueryTile();
  }
  if (additive)
    loadAdditiveVector();
  zeroFill(Acc, {blockQ, dimPadded});
  loop(0, blockQ, 1, [&](Value i) {
    memref::StoreOp::create(b, negInf(), M, ValueRange{i});
    memref::StoreOp::create(b, f32(0), L, ValueRange{i});
  });

  // Only the KV tiles that can hold a kept key are classified at all: a
  // window's query tile costs O(window), not O(seq_kv).
  auto [keyLo, keyHi] =
      emitKeyRange(b, b.getLoc(), op.getMask(), q0, add(q0, rows), seqQ, seqKv);
  Value firstKvTile =
      arith::FloorDivSIOp::create(b, arith::MaxSIOp::create(b, keyLo, idx(0)), idx(blockKv));
  Value endKvTile = arith::CeilDivSIOp::create(
      b, arith::MaxSIOp::create(b, arith::MinSIOp::create(b, keyHi, seqKv), idx(0)), idx(blockKv));
  // Visited tiles in order; while one is computed, the next one's k and v rows
  // are prefetched. Sparse masks visit few tiles per query tile, scattered or
  // not touched before, which demand misses otherwise fetch from DRAM (BigBird
  // at seq 8192: 71% -> 76% of the peak; dense gains ~1%, its next tile being
  // mostly in the hardware prefetcher's stream already).
  Value firstVisited = nextVisitedTile(firstKvTile, endKvTile);
  auto walk = scf::WhileOp::create(b, TypeRange{b.getIndexType()}, ValueRange{firstVisited});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&walk.getBefore(), {}, {b.getIndexType()}, {b.getLoc()});
    Value cur = before->getArgument(0);
    scf::ConditionOp::create(b, lt(cur, endKvTile), ValueRange{cur});
    Block *after = b.createBlock(&walk.getAfter(), {}, {b.getIndexType()}, {b.getLoc()});
    cur = after->getArgument(0);
    Value next = nextVisitedTile(add(cur, idx(1)), endKvTile);
    Value isFirst = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, cur, firstVisited);
    visitTile(cur, isFirst, lt(next, endKvTile), next, counterName);
    scf::YieldOp::create(b, ValueRange{next});
  }
  writeOutputs();
  if (op.hasOutput(OutputKind::weights))
    writeWeights();
}

FailureOr<func::FuncOp>
mlir::attn::buildCpuFlashKernel(FlashOp op, const CpuKernelConfig &config) {
  // The kernel's own attention, or a multi-head attention's.
  auto kernel = op->getParentOfType<KernelOp>();
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
  std::string name = phaseFunctionName(kernel.getSymName(), "tile");
  std::string counter = (kernel.getSymName() + "_tiles_visited").str();
  if (config.countTiles) {
    auto type = MemRefType::get({1}, b.getI64Type());
    memref::GlobalOp::create(
        b, counter, b.getStringAttr("public"), type,
        DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()), int64_t(0)),
        /*constant=*/false, /*alignment=*/nullptr);
  }
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, elem);
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type index = b.getIndexType();
  SmallVector<Type> args = {elemBuf, elemBuf, elemBuf, elemBuf, f32Buf};
  if (op.hasOutput(OutputKind::weights))
    args.push_back(elemBuf);
  if (op.getVarlen()) // cu_seqlens_q, cu_seqlens_kv, and with kv_cache = lengths kv_lens
    args.append(op.getPageSize() ? 3 : 2, MemRefType::get({ShapedType::kDynamic}, b.getI32Type()));
  if (ArrayAttr inputs = op.getInputsAttr())
    for (auto input : inputs.getAsRange<ModInputAttr>())
      args.push_back(MemRefType::get({ShapedType::kDynamic}, input.getElementType()));
  args.append({i64Buf, index, index, index});
  auto type = FunctionType::get(ctx, args, {b.getI32Type()});
  auto func = func::FuncOp::create(b, name, type);
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  ImplicitLocOpBuilder body(op.getLoc(), ctx);
  FlashKernelBuilder(op, config, body).build(func, counter);
  return func;
}
