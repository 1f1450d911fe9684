//===- BackwardKernel.cpp - attn.flash_backward to CPU tile functions -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The phases' tile functions of a backward kernel (BackwardKernelBuilder.h
// says what each computes): reading their arguments, a KV tile's and a
// query tile's rows, the gradient products dV, dK and the dq partials
// (register-blocked outer products), and the dq and table sums.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"

#include "BackwardKernelBuilder.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "attnc/Transforms/TileClassifier.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// The function's arguments (q ... dv, the mods' inputs, the f32 ones'
/// gradients, dq_part, delta, the f32 inputs' shares, params, the item's
/// coordinates); returns the coordinates.
ArrayRef<BlockArgument> BackwardKernelBuilder::readCommon(ArrayRef<BlockArgument> args) {
  module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  doBuf = args[5], dLseBuf = args[6], dqBuf = args[7], dkBuf = args[8], dvBuf = args[9];
  unsigned inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  unsigned f32Inputs = InputGradients::tablesOf(op).size(), at = 10 + inputs + f32Inputs;
  partBuf = args[at], deltaBuf = args[at + 1];
  params = args[at + 2 + f32Inputs];
  ArrayRef<BlockArgument> coords = args.drop_front(at + 3 + f32Inputs);
  batch = coords[0];
  readAttentionParams();
  modInputs = ModInputViews(b, b.getLoc(), op, ValueRange(args.slice(10, inputs)), params, 10);
  if (f32Inputs)
    tables.emplace(b, op, modInputs, ValueRange(args.slice(10 + inputs, f32Inputs)),
                   ValueRange(args.slice(at + 2, f32Inputs)), params);
  doS = readStrides(ATTNC_P_DOUT_STRIDES);
  dqS = readStrides(ATTNC_P_DQ_STRIDES);
  dkS = readStrides(ATTNC_P_DK_STRIDES);
  dvS = readStrides(ATTNC_P_DV_STRIDES);
  for (int i = 0; i < 4; ++i)
    partS[i] = readParam(ATTNC_P_DQ_PART_STRIDES + i);
  deltaS[0] = readParam(ATTNC_P_DELTA_STRIDES);
  deltaS[1] = readParam(ATTNC_P_DELTA_STRIDES + 1);
  status = memref::AllocaOp::create(b, MemRefType::get({1}, b.getI32Type()));
  store(arith::ConstantIntOp::create(b, 0, 32), status, {idx(0)});
  return coords;
}

/// The function's status becomes `code` (the zero divisor's 1, or a load's
/// index failure naming its input).
void BackwardKernelBuilder::fail(OpBuilder &nb, int32_t code) {
  memref::StoreOp::create(nb, b.getLoc(), arith::ConstantIntOp::create(nb, b.getLoc(), code, 32),
                          status, ValueRange{idx(0)});
}

/// An attn.load of a mod's body: the element, or 0 and the status naming
/// the input where an index is outside it.
Value BackwardKernelBuilder::loadInput(Operation *load, ArrayRef<Value> indices) {
  return modInputs.load(b, b.getLoc(), cast<LoadOp>(load), indices,
                        [&](OpBuilder &nb, int32_t code) { fail(nb, code); });
}

/// Lanes [d, d + w) of the row at `base` of a tensor as f32; lanes past
/// head_dim are 0 and not read (the row may end the tensor).
Value BackwardKernelBuilder::loadRow(Value buf, Value base, int64_t d) {
  return loadLanes(buf, add(base, idx(d)), std::min(w, dim - d));
}

/// Stores lanes [d, min(d + w, head_dim)) of x times `factor` at `base` of an
/// output, rounded to its element type.
void BackwardKernelBuilder::storeScalars(Value x, Value buf, Value base, int64_t d,
                                         Value factor) {
  for (int64_t lane = 0; lane < w && d + lane < dim; ++lane) {
    Value e = vector::ExtractOp::create(b, x, ArrayRef<int64_t>{lane});
    e = arith::MulFOp::create(b, e, factor);
    store(roundFromF32(b, b.getLoc(), e, elemType, cfg.bf16Dot), buf, {add(base, idx(d + lane))});
  }
}

SmallVector<Value> BackwardKernelBuilder::outerProducts(int64_t rowsIn, int64_t vecsIn, Value lo,
                                                        Value hi, Broadcast x, Lanes y,
                                                        SmallVector<Value> init) {
  auto loop = scf::ForOp::create(
      b, lo, hi, idx(1), init,
      [&](OpBuilder &nested, Location, Value l, ValueRange acc) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        SmallVector<Value> lanes, next;
        for (int64_t c = 0; c < vecsIn; ++c)
          lanes.push_back(y(c, l));
        for (int64_t a = 0; a < rowsIn; ++a) {
          Value s = splat(x(a, l));
          for (int64_t c = 0; c < vecsIn; ++c)
            next.push_back(fma(s, lanes[c], acc[a * vecsIn + c]));
        }
        scf::YieldOp::create(b, next);
      });
  return SmallVector<Value>(loop.getResults());
}

/// The chunk's dq partial rows of every query head of the group: 0.
void BackwardKernelBuilder::zeroPartials(Value chunk) {
  loop(0, group, 1, [&](Value h) {
    Value head = add(mul(kvHead, idx(group)), h);
    loop(0, seqQ, 1, [&](Value pos) {
      Value row = partRow(head, chunk, pos);
      loop(0, dim, 1, [&](Value d) { store(f32(0), partBuf, {add(row, d)}); });
    });
  });
}

/// KF, KT, VT for keys [k0, k0 + cols); DK = DV = 0.
void BackwardKernelBuilder::loadKvTile(Value k0, Value cols) {
  Value zero = zeroVec();
  loop(0, blockKv, 1, [&](Value j) {
    ifThenElse(
        lt(j, cols),
        [&] {
          Value kRow = offset(kS, batch, kvHead, add(k0, j));
          Value vRow = offset(vS, batch, kvHead, add(k0, j));
          for (int64_t d = 0; d < dimPadded; d += w) {
            Value kx = loadRow(kBuf, kRow, d), vx = loadRow(vBuf, vRow, d);
            storeVec(kx, KF, {j, idx(d)});
            for (int64_t lane = 0; lane < w && d + lane < dim; ++lane) {
              store(vector::ExtractOp::create(b, kx, ArrayRef<int64_t>{lane}), KT,
                    {idx(d + lane), j});
              store(vector::ExtractOp::create(b, vx, ArrayRef<int64_t>{lane}), VT,
                    {idx(d + lane), j});
            }
          }
        },
        [&] {
          for (int64_t d = 0; d < dimPadded; d += w)
            storeVec(zero, KF, {j, idx(d)});
          loop(0, dim, 1, [&](Value d) {
            store(f32(0), KT, {d, j});
            store(f32(0), VT, {d, j});
          });
        });
    for (int64_t d = 0; d < dimPadded; d += w) {
      storeVec(zero, DK, {j, idx(d)});
      storeVec(zero, DV, {j, idx(d)});
    }
  });
}

/// QF, DOF, D (from the delta phase) and LS for the query rows [q0, q0 +
/// rows) of `head`.
void BackwardKernelBuilder::loadQueryTile(Value head, Value q0, Value rows) {
  Value zero = zeroVec();
  Value inf = f32(std::numeric_limits<double>::infinity());
  loop(0, blockQ, 1, [&](Value i) {
    ifThenElse(
        lt(i, rows),
        [&] {
          Value pos = add(q0, i);
          Value qRow = offset(qS, batch, head, pos), gRow = offset(doS, batch, head, pos);
          for (int64_t d = 0; d < dimPadded; d += w) {
            storeVec(loadRow(qBuf, qRow, d), QF, {i, idx(d)});
            storeVec(loadRow(doBuf, gRow, d), DOF, {i, idx(d)});
          }
          store(load(deltaBuf, {deltaAt(head, pos)}), D, {i});
          Value lse = load(lseBuf, {offset(lseS, batch, head, pos)});
          Value dead = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, lse, negInf());
          Value scaled = arith::MulFOp::create(b, lse, f32(kLog2e));
          store(arith::SelectOp::create(b, dead, inf, scaled), LS, {i});
        },
        [&] {
          for (int64_t d = 0; d < dimPadded; d += w) {
            storeVec(zero, QF, {i, idx(d)});
            storeVec(zero, DOF, {i, idx(d)});
          }
          store(f32(0), D, {i});
          store(inf, LS, {i});
        });
  });
}

/// acc[k] += sum over the pair's rows i of weights[i][k] * rowsOf[i] (DV
/// from P and d_out, DK from dS and q).
void BackwardKernelBuilder::keyGradients(Value acc, Value weights, Value rowsOf) {
  registerBlocks(blockKv, dimPadded / w, [&](Value k0, int64_t keys, int64_t c0, int64_t vecs) {
    auto at = [&](int64_t a, int64_t c) {
      return SmallVector<Value>{add(k0, idx(a)), idx((c0 + c) * w)};
    };
    SmallVector<Value> init;
    for (int64_t a = 0; a < keys; ++a)
      for (int64_t c = 0; c < vecs; ++c)
        init.push_back(loadVec(acc, at(a, c)));
    // Rows whose mask ranges miss these keys add 0: not visited.
    Value lo = idx(0), hi = idx(blockQ);
    if (maskInBlock()) {
      Value block = arith::DivUIOp::create(b, k0, idx(blockRows));
      lo = load(RR, {block, idx(0)});
      hi = load(RR, {block, idx(1)});
    }
    SmallVector<Value> sums = outerProducts(
        keys, vecs, lo, hi, [&](int64_t a, Value i) { return load(weights, {i, add(k0, idx(a))}); },
        [&](int64_t c, Value i) { return loadVec(rowsOf, {i, idx((c0 + c) * w)}); }, init);
    for (int64_t a = 0; a < keys; ++a)
      for (int64_t c = 0; c < vecs; ++c)
        storeVec(sums[a * vecs + c], acc, at(a, c));
  });
}

/// The chunk's dq partial rows [q0, q0 + rows) += dS K.
void BackwardKernelBuilder::queryGradients(Value head, Value chunk, Value q0, Value rows) {
  registerBlocks(blockQ, dimPadded / w, [&](Value i0, int64_t block, int64_t c0, int64_t vecs) {
    auto [lo, hi] = maskInBlock() ? keyRangeOf(i0) : std::pair<Value, Value>{idx(0), idx(blockKv)};
    SmallVector<Value> sums = outerProducts(
        block, vecs, lo, hi, [&](int64_t a, Value k) { return load(DS, {add(i0, idx(a)), k}); },
        [&](int64_t c, Value k) { return loadVec(KF, {k, idx((c0 + c) * w)}); },
        SmallVector<Value>(block * vecs, zeroVec()));
    for (int64_t a = 0; a < block; ++a) {
      Value i = add(i0, idx(a));
      ifThen(lt(i, rows), [&] {
        Value row = partRow(head, chunk, add(q0, i));
        for (int64_t c = 0; c < vecs; ++c) {
          int64_t d = (c0 + c) * w;
          Value sum = arith::AddFOp::create(b, loadRow(partBuf, row, d), sums[a * vecs + c]);
          if (d + w <= dim) {
            storeVec(sum, partBuf, {add(row, idx(d))});
            continue;
          }
          Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                                    ValueRange{idx(dim - d)});
          vector::MaskedStoreOp::create(b, partBuf, ValueRange{add(row, idx(d))}, mask, sum);
        }
      });
    }
  });
}

/// One (query tile, KV tile) pair of query head `head`, unless the mask
/// empties it.
void BackwardKernelBuilder::visitPair(Value head, Value chunk, Value q0, Value k0, Value cols) {
  Value rows = minIdx(idx(blockQ), arith::SubIOp::create(b, seqQ, q0));
  TileBounds<Value> bounds{q0, add(q0, rows), k0, add(k0, cols), seqQ, seqKv};
  auto loadRange = [&](Operation *load, ArrayRef<std::pair<Value, Value>> box) {
    return modInputs.range(b, b.getLoc(), cast<LoadOp>(load), box);
  };
  Value full, empty;
  std::tie(full, empty) = attnc::emitTileClassWithMaskMod(
      b, b.getLoc(), module, op.getMask(), op.getMaskMod(), bounds, batch, head, head, loadRange);
  ifThen(notI1(empty), [&] {
    loadQueryTile(head, q0, rows);
    if (maskInBlock())
      storeKeyRanges(q0, k0);
    Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, cols, idx(blockKv));
    Value fused = scoreMod ? arith::ConstantIntOp::create(b, 0, 1).getResult()
                           : arith::AndIOp::create(b, full, whole).getResult();
    scoreBlocks(fused, q0, k0);
    if (!maskInBlock())
      ifThen(notI1(fused), [&] { elementPass(head, q0, rows, k0, cols, full); });
    gradientScores();
    if (GS)
      inputPass(chunk, rows, cols);
    keyGradients(DV, PS, DOF);
    keyGradients(DK, DS, QF);
    queryGradients(head, chunk, q0, rows);
  });
}

/// dk = scale * DK and dv = DV for the tile's keys [k0, k0 + cols).
void BackwardKernelBuilder::writeKeyRows(Value k0, Value cols) {
  Value scale = f32(op.getScaleOrDefault()), one = f32(1);
  loop(0, cols, 1, [&](Value j) {
    Value kRow = offset(dkS, batch, kvHead, add(k0, j));
    Value vRow = offset(dvS, batch, kvHead, add(k0, j));
    for (int64_t d = 0; d < dimPadded; d += w) {
      storeScalars(loadVec(DK, {j, idx(d)}), dkBuf, kRow, d, scale);
      storeScalars(loadVec(DV, {j, idx(d)}), dvBuf, vRow, d, one);
    }
  });
}

void BackwardKernelBuilder::buildKeyValue(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  ArrayRef<BlockArgument> coords = readCommon(args);
  kvHead = coords[1];
  Value chunk = coords[2];
  KF = stackBuffer({blockKv, dimPadded});
  KT = stackBuffer({dim, blockKv});
  VT = stackBuffer({dim, blockKv});
  DK = stackBuffer({blockKv, dimPadded});
  DV = stackBuffer({blockKv, dimPadded});
  QF = stackBuffer({blockQ, dimPadded});
  DOF = stackBuffer({blockQ, dimPadded});
  D = stackBuffer({blockQ});
  LS = stackBuffer({blockQ});
  PS = stackBuffer({blockQ, blockKv});
  DS = stackBuffer({blockQ, blockKv});
  if (scoreMod)
    SL = stackBuffer({blockQ, blockKv});
  if (tables && tables->read()) {
    GS = stackBuffer({blockQ, blockKv});
    tables->allocate(blockQ, blockKv);
  }
  if (maskInBlock()) {
    auto ranges = [&](int64_t extent) {
      return memref::AllocaOp::create(
          b, MemRefType::get({int64_t(llvm::divideCeil(extent, blockRows)), 2}, b.getIndexType()));
    };
    RK = ranges(blockQ);
    RR = ranges(blockKv);
  }
  zeroPartials(chunk);
  if (tables)
    tables->zeroShares(batch, kvHead, chunk);
  Value kvTiles = arith::CeilDivSIOp::create(b, seqKv, idx(blockKv));
  Value qTiles = arith::CeilDivSIOp::create(b, seqQ, idx(blockQ));
  loop(chunk, kvTiles, chunks, [&](Value tile) {
    Value k0 = mul(tile, idx(blockKv));
    Value cols = minIdx(idx(blockKv), arith::SubIOp::create(b, seqKv, k0));
    loadKvTile(k0, cols);
    loop(0, group, 1, [&](Value h) {
      Value head = add(mul(kvHead, idx(group)), h);
      loop(0, qTiles, 1, [&](Value t) {
        visitPair(head, chunk, mul(t, idx(blockQ)), k0, cols);
      });
    });
    writeKeyRows(k0, cols);
  });
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

/// Row i of an f32 input's gradient, d_<name>: the dkdv items' shares
/// summed (InputGradients).
void BackwardKernelBuilder::buildInputSum(func::FuncOp func, size_t table) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readCommon(entry->getArguments());
  tables->sumShares(table, coords[0]);
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

/// D = rowsum(d_out * out) - d_lse of query tile (b, h, t)'s rows, in f32:
/// once per row, where the pairs read it once per KV tile. (lse's gradient
/// adds P d_lse to dS = P (dP - D): it enters through D alone.)
void BackwardKernelBuilder::buildDelta(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readCommon(entry->getArguments());
  Value head = coords[1];
  Value q0 = mul(coords[2], idx(blockQ));
  Value rows = minIdx(idx(blockQ), arith::SubIOp::create(b, seqQ, q0));
  // d_lse passed as NULL: an empty view.
  Value hasLseGradient = arith::CmpIOp::create(
      b, arith::CmpIPredicate::sgt, memref::DimOp::create(b, dLseBuf, 0), idx(0));
  Strides dLseS = readStrides(ATTNC_P_DLSE_STRIDES);
  loop(0, rows, 1, [&](Value i) {
    Value pos = add(q0, i);
    Value gRow = offset(doS, batch, head, pos), oRow = offset(outS, batch, head, pos);
    Value dot = zeroVec();
    for (int64_t d = 0; d < dimPadded; d += w)
      dot = fma(loadRow(doBuf, gRow, d), loadRow(outBuf, oRow, d), dot);
    Value delta = vector::ReductionOp::create(b, vector::CombiningKind::ADD, dot);
    delta = select(hasLseGradient, b.getF32Type(), [&] {
      Value at = offset(dLseS, batch, head, pos);
      return arith::SubFOp::create(b, delta, load(dLseBuf, {at})).getResult();
    }, [&] { return delta; });
    store(delta, deltaBuf, {deltaAt(head, pos)});
  });
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

/// dq rows of query tile (b, h, t): scale * the chunks' partials, in order.
void BackwardKernelBuilder::buildQuery(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  ArrayRef<BlockArgument> coords = readCommon(args);
  Value head = coords[1];
  Value q0 = mul(coords[2], idx(blockQ));
  Value rows = minIdx(idx(blockQ), arith::SubIOp::create(b, seqQ, q0));
  Value scale = f32(op.getScaleOrDefault());
  loop(0, rows, 1, [&](Value i) {
    Value pos = add(q0, i);
    Value out = offset(dqS, batch, head, pos);
    for (int64_t d = 0; d < dimPadded; d += w) {
      Value sum = zeroVec();
      for (int64_t c = 0; c < chunks; ++c)
        sum = arith::AddFOp::create(b, sum, loadRow(partBuf, partRow(head, idx(c), pos), d));
      storeScalars(sum, dqBuf, out, d, scale);
    }
  });
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

LogicalResult mlir::attn::buildCpuBackwardKernel(FlashBackwardOp op,
                                                 const CpuKernelConfig &config) {
  auto kernel = cast<KernelOp>(op->getParentOp());
  MLIRContext *ctx = kernel.getContext();
  if (op.getTileKv() % config.vectorWidth != 0)
    return op.emitOpError() << "block_kv (" << op.getTileKv()
                            << ") must be a multiple of the CPU target's vector width ("
                            << config.vectorWidth << " f32 lanes)";
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, op.getDtype());
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  SmallVector<Type> args = {elemBuf, elemBuf, elemBuf, elemBuf, f32Buf,
                            elemBuf, f32Buf,  elemBuf, elemBuf, elemBuf};
  if (ArrayAttr inputs = op.getInputsAttr())
    for (auto decl : inputs.getAsRange<ModInputAttr>())
      args.push_back(MemRefType::get({ShapedType::kDynamic}, decl.getElementType()));
  SmallVector<ModInputAttr> tables = InputGradients::tablesOf(op);
  args.append(tables.size(), f32Buf); // their gradients
  args.append({f32Buf, f32Buf});      // dq_part, delta
  args.append(tables.size(), f32Buf); // their shares
  args.push_back(i64Buf);
  auto create = [&](StringRef phase, int64_t rank) {
    return createTileFunction(b, kernel, args, phase, rank);
  };
  using Phase = void (BackwardKernelBuilder::*)(func::FuncOp);
  std::pair<StringRef, Phase> phases[] = {{"", &BackwardKernelBuilder::buildDelta},
                                          {"dkdv", &BackwardKernelBuilder::buildKeyValue},
                                          {"dq", &BackwardKernelBuilder::buildQuery}};
  for (auto [phase, build] : phases) {
    func::FuncOp func = create(phase, 3);
    ImplicitLocOpBuilder body(op.getLoc(), ctx);
    BackwardKernelBuilder builder(op, config, body);
    (builder.*build)(func);
  }
  for (auto [n, table] : llvm::enumerate(tables)) {
    func::FuncOp func = create(("d_" + table.getName().getValue()).str(), 1);
    ImplicitLocOpBuilder body(op.getLoc(), ctx);
    BackwardKernelBuilder(op, config, body).buildInputSum(func, n);
  }
  return success();
}
