//===- BackwardKernel.cpp - attn.flash_backward to CPU tile functions -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gradients of one attention, FlashAttention-2 style, in three phases
// (KernelInterface.h, backwardInterface), and one more per f32 mod input:
//
//   delta, item (b, h, q_tile): D = rowsum(d_out * out) - d_lse of the tile's
//     rows (d_lse: lse's gradient, where given).
//   dkdv, item (b, g, chunk): for the KV tiles chunk, chunk + chunks, ... of
//     KV head g, the tile's k and v (f32: KF rows, KT and VT columns), then for
//     every query head of g and every query tile the mask does not empty, the
//     tile pair: P = exp(s - lse) recomputed, dP = d_out V^T, dS = P (dP - D)
//     (times score_mod'), dV += P^T d_out, dK += dS^T Q, and the chunk's own
//     dq partial += dS K. dk and dv rows are written once per KV tile.
//   dq, item (b, h, q_tile): dq = scale * sum of the chunks' partials, added
//     in chunk order; so the result does not depend on the thread count.
//   d_<name>, item i of the input's first dim: its gradient, the dkdv items'
//     shares (each item's own copy) summed in item order (BackwardInputs.h).
//
// Within a tile pair the scores run along the vector lanes by key (S is
// rows x keys): the five products are outer products of a broadcast operand
// and a row of vectors, each register-blocked (rows or keys x vectors of
// keys or head_dim) over its reduction (head_dim, rows or keys). The query
// tile's q and d_out are read once per pair into f32 rows (QF, DOF; rows
// past seq_q are 0), with their D beside them, so every loop runs over whole
// tiles. P is 2^(s log2 e - lse log2 e). Without mods and with a window
// mask (maskInBlock) every tile takes it in the score block, masked on
// vectors of keys, and the register blocks outside each block of rows' key
// range (the mask's rule) are skipped; otherwise full tiles without a
// score_mod take it there and the others in an element pass that applies the
// mask, the mask_mod, the score_mod and its derivative (InlineModSlope).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"

#include "BackwardInputs.h"
#include "FlashKernelBuilder.h"
#include "LoopBuilder.h"
#include "ModInputLoad.h"
#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr double kLog2e = 1.44269504088896341;

class BackwardKernelBuilder : LoopBuilder {
public:
  BackwardKernelBuilder(FlashBackwardOp op, const CpuKernelConfig &config,
                        ImplicitLocOpBuilder &b)
      : LoopBuilder(b), op(op), cfg(config), w(config.vectorWidth), dim(op.getDim()),
        dimPadded((dim + w - 1) / w * w), blockQ(op.getTileQ()), blockKv(op.getTileKv()),
        group(op.getHeads() / op.getKvHeads()), chunks(op.getChunks()),
        elemType(op.getDtype()), scoreMod(!op.getScoreMod().empty()),
        // The P V register block of the forward kernel (RegisterBlocks.h): 6
        // rows x 2 vectors on 16 registers, 4 x 4 on 32.
        blockRows(config.pvRows), blockVectors(config.pvVectors) {}

  void buildDelta(func::FuncOp func);
  void buildKeyValue(func::FuncOp func);
  void buildQuery(func::FuncOp func);
  void buildInputSum(func::FuncOp func, size_t table);

private:
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
  Value stackBuffer(ArrayRef<int64_t> shape) {
    return memref::AllocaOp::create(b, MemRefType::get(shape, b.getF32Type()),
                                    b.getI64IntegerAttr(kLineBytes));
  }
  /// Where row (head, pos)'s D is in delta.
  Value deltaAt(Value head, Value pos) {
    return add(add(mul(batch, deltaS[0]), mul(head, deltaS[1])), pos);
  }
  /// dq_part's row (head, pos) of this item's chunk.
  Value partRow(Value head, Value chunk, Value pos) {
    return add(add(add(mul(batch, partS[0]), mul(head, partS[1])), mul(chunk, partS[2])),
               mul(pos, partS[3]));
  }

  ArrayRef<BlockArgument> readCommon(ArrayRef<BlockArgument> args);
  void fail(OpBuilder &nb, int32_t code);
  Value loadInput(Operation *load, ArrayRef<Value> indices);
  Value loadRow(Value buf, Value base, int64_t d);
  void storeScalars(Value x, Value buf, Value base, int64_t d, Value factor);
  using Broadcast = llvm::function_ref<Value(int64_t a, Value l)>;
  using Lanes = llvm::function_ref<Value(int64_t c, Value l)>;
  template <typename Fn> void registerBlocks(int64_t extent, int64_t vectors, Fn fn);
  using KeyVector = llvm::function_ref<void(Value row, ArrayRef<Value> at, Value sum)>;
  void keyProducts(Value rowsOf, Value columns, Value target, KeyVector done);
  void storeKeyRanges(Value q0, Value k0);
  std::pair<Value, Value> keyRangeOf(Value i0);
  std::pair<Value, Value> rowRangeOf(Value keyLo, Value keyHi);
  /// init[a][c] + the sum over l in [lo, hi) of x(a, l) * y(c, l), a <
  /// rowsIn, c < vecsIn: one register block, its accumulators in registers.
  SmallVector<Value> outerProducts(int64_t rowsIn, int64_t vecsIn, Value lo, Value hi,
                                   Broadcast x, Lanes y, SmallVector<Value> init);
  void zeroPartials(Value chunk);
  void loadKvTile(Value k0, Value cols);
  void loadQueryTile(Value head, Value q0, Value rows);
  void scoreBlocks(Value fused, Value q0, Value k0);
  /// Whether partial tiles take the mask attribute on vectors of keys in the
  /// score block (a window mask, no mods), with no element pass.
  bool maskInBlock() {
    return !scoreMod && op.getMaskMod().empty() && canEmitMaskKeepsVector(op.getMask());
  }
  void elementPass(Value head, Value q0, Value rows, Value k0, Value cols, Value full);
  void gradientScores();
  void keyGradients(Value acc, Value weights, Value rowsOf);
  void queryGradients(Value head, Value chunk, Value q0, Value rows);
  void inputPass(Value chunk, Value rows, Value cols);
  void visitPair(Value head, Value chunk, Value q0, Value k0, Value cols);
  void writeKeyRows(Value k0, Value cols);

  FlashBackwardOp op;
  CpuKernelConfig cfg;
  int64_t w, dim, dimPadded, blockQ, blockKv, group, chunks;
  Type elemType;
  bool scoreMod;
  int64_t blockRows, blockVectors;
  ModuleOp module;
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, doBuf, dLseBuf, dqBuf, dkBuf, dvBuf, partBuf, deltaBuf;
  Value batch, kvHead, status;
  ModInputViews modInputs; // the tensors the mods read
  std::optional<InputGradients> tables; // the f32 ones, whose gradients are computed
  Strides doS, dqS, dkS, dvS;
  Value partS[4], deltaS[2];
  /// Per KV tile (f32, zero past seq_kv and head_dim): KF k's rows, KT and
  /// VT k's and v's columns; DK and DV the tile's gradient rows.
  Value KF, KT, VT, DK, DV;
  /// Per tile pair: QF, DOF q's and d_out's rows (zero past seq_q), D the
  /// rows' rowsum(d_out * out) (from delta), LS their lse in log2 units (+inf where the
  /// row is past seq_q or keeps nothing: P = 0), PS P then (in the element
  /// pass) raw scores, DS dS, SL score_mod's derivative; where the score_mod
  /// reads an f32 input, GS = P (dP - D).
  Value QF, DOF, D, LS, PS, DS, SL, GS;
  /// maskInBlock kernels, per pair: each row block's kept key range, and
  /// each key block's rows (storeKeyRanges).
  Value RK, RR;
};

} // namespace

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
  Type elem = cast<MemRefType>(buf.getType()).getElementType();
  auto type = VectorType::get({w}, elem);
  Value at = add(base, idx(d));
  Value x;
  if (d + w <= dim) {
    x = vector::LoadOp::create(b, type, buf, ValueRange{at});
  } else {
    Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                              ValueRange{idx(dim - d)});
    Value pass = arith::ConstantOp::create(b, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
    x = vector::MaskedLoadOp::create(b, type, buf, ValueRange{at}, mask, pass);
  }
  return elem.isF32() ? x : arith::ExtFOp::create(b, vecType(), x).getResult();
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

/// fn(i0, rows, c0, vecs) for every register block of `extent` broadcast
/// rows (blockRows at a time, the last block what remains) x `vectors`
/// vectors (blockVectors at a time, the last group what remains).
template <typename Fn>
void BackwardKernelBuilder::registerBlocks(int64_t extent, int64_t vectors, Fn fn) {
  int64_t whole = extent / blockRows * blockRows;
  auto groups = [&](Value i0, int64_t rows) {
    for (int64_t c0 = 0; c0 < vectors; c0 += blockVectors)
      fn(i0, rows, c0, std::min(blockVectors, vectors - c0));
  };
  if (whole)
    loop(0, whole, blockRows, [&](Value i0) { groups(i0, blockRows); });
  if (extent > whole)
    groups(idx(whole), extent - whole);
}

/// For each register block of the pair's rows x vectors of keys: the dot
/// products of rows `rowsOf` (QF or DOF) with the tile's columns `columns`
/// (KT or VT) over head_dim, handed to `done` per vector with the row and
/// where the vector is in PS / DS.
void BackwardKernelBuilder::keyProducts(Value rowsOf, Value columns, Value target,
                                        KeyVector done) {
  registerBlocks(blockQ, blockKv / w, [&](Value i0, int64_t rows, int64_t c0, int64_t vecs) {
    auto at = [&](int64_t a, int64_t c) {
      return SmallVector<Value>{add(i0, idx(a)), idx((c0 + c) * w)};
    };
    auto compute = [&] {
      SmallVector<Value> acc = outerProducts(
          rows, vecs, idx(0), idx(dim),
          [&](int64_t a, Value d) { return load(rowsOf, {add(i0, idx(a)), d}); },
          [&](int64_t c, Value d) { return loadVec(columns, {d, idx((c0 + c) * w)}); },
          SmallVector<Value>(rows * vecs, zeroVec()));
      for (int64_t a = 0; a < rows; ++a)
        for (int64_t c = 0; c < vecs; ++c)
          done(add(i0, idx(a)), at(a, c), acc[a * vecs + c]);
    };
    if (!maskInBlock())
      return compute();
    // A block whose keys the rows' mask ranges miss is 0 (P and dS).
    auto [lo, hi] = keyRangeOf(i0);
    Value meets = arith::AndIOp::create(b, lt(lo, idx((c0 + vecs) * w)), lt(idx(c0 * w), hi));
    ifThenElse(meets, compute, [&] {
      for (int64_t a = 0; a < rows; ++a)
        for (int64_t c = 0; c < vecs; ++c)
          storeVec(zeroVec(), target, at(a, c));
    });
  });
}

/// RK: for each block of blockRows rows of the pair, the keys of the tile
/// the mask attribute may keep for them, [lo, hi); RR: for each block of
/// blockRows keys (dV's and dK's register blocks), the rows whose blocks may
/// keep one of them (maskInBlock kernels). Once per pair: the products of
/// its register blocks read them.
void BackwardKernelBuilder::storeKeyRanges(Value q0, Value k0) {
  for (int64_t r = 0; r * blockRows < blockQ; ++r) {
    Value first = add(q0, idx(r * blockRows));
    Value last = add(q0, idx(std::min((r + 1) * blockRows, blockQ)));
    auto [lo, hi] = emitKeyRange(b, b.getLoc(), op.getMask(), first, last, seqQ, seqKv);
    auto clamp = [&](Value key) {
      return minIdx(arith::MaxSIOp::create(b, arith::SubIOp::create(b, key, k0), idx(0)),
                    idx(blockKv));
    };
    store(clamp(lo), RK, {idx(r), idx(0)});
    store(clamp(hi), RK, {idx(r), idx(1)});
  }
  for (int64_t r = 0; r * blockRows < blockKv; ++r) {
    auto [lo, hi] = rowRangeOf(idx(r * blockRows), idx(std::min((r + 1) * blockRows, blockKv)));
    store(lo, RR, {idx(r), idx(0)});
    store(hi, RR, {idx(r), idx(1)});
  }
}

/// The tile's keys [lo, hi) the rows of the block at row i0 may keep.
std::pair<Value, Value> BackwardKernelBuilder::keyRangeOf(Value i0) {
  Value r = arith::DivUIOp::create(b, i0, idx(blockRows));
  return {load(RK, {r, idx(0)}), load(RK, {r, idx(1)})};
}

/// The rows [lo, hi) whose blocks may keep a key of [keyLo, keyHi): the
/// first and last block whose range meets it.
std::pair<Value, Value> BackwardKernelBuilder::rowRangeOf(Value keyLo, Value keyHi) {
  int64_t blocks = int64_t(llvm::divideCeil(blockQ, blockRows));
  auto loop = scf::ForOp::create(
      b, idx(0), idx(blocks), idx(1), ValueRange{idx(blockQ), idx(0)},
      [&](OpBuilder &nested, Location, Value r, ValueRange hull) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
        Value lo = load(RK, {r, idx(0)}), hi = load(RK, {r, idx(1)});
        Value meets = arith::AndIOp::create(b, lt(lo, keyHi), lt(keyLo, hi));
        Value first = mul(r, idx(blockRows));
        Value last = minIdx(add(first, idx(blockRows)), idx(blockQ));
        scf::YieldOp::create(
            b, ValueRange{arith::SelectOp::create(b, meets, minIdx(hull[0], first), hull[0]),
                          arith::SelectOp::create(
                              b, meets, arith::MaxSIOp::create(b, hull[1], last), hull[1])});
      });
  return {loop.getResult(0), loop.getResult(1)};
}

/// PS = q . k for every row and key of the pair, the element pass's input;
/// where `fused` (a full tile without score_mod), P = 2^(q . k scale log2 e -
/// LS) instead, and with maskInBlock() P of every tile, 0 where the mask
/// attribute drops the pair or the key is past seq_kv (rows past seq_q have
/// LS = +inf).
void BackwardKernelBuilder::scoreBlocks(Value fused, Value q0, Value k0) {
  Value factor = splat(f32(op.getScaleOrDefault() * kLog2e));
  auto indexVec = VectorType::get({w}, b.getIndexType());
  SmallVector<int64_t> iota(w);
  for (int64_t l = 0; l < w; ++l)
    iota[l] = l;
  Value lanes = arith::ConstantOp::create(b, b.getIndexVectorAttr(iota));
  auto probabilities = [&](Value i, Value s) {
    Value t = arith::SubFOp::create(b, arith::MulFOp::create(b, s, factor), splat(load(LS, {i})));
    return emitExp2NonPositive(b, b.getLoc(), t, ExpAccuracy::f32, cfg.avx512Scalef);
  };
  auto masked = [&](Value i, Value key, Value p) {
    Value qPos = vector::BroadcastOp::create(b, indexVec, add(q0, i));
    Value kPos = arith::AddIOp::create(b, vector::BroadcastOp::create(b, indexVec, add(k0, key)),
                                       lanes);
    Value keep = arith::AndIOp::create(
        b, emitMaskKeepsVector(b, b.getLoc(), op.getMask(), qPos, kPos, seqQ, seqKv),
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, kPos,
                              vector::BroadcastOp::create(b, indexVec, seqKv)));
    return arith::SelectOp::create(b, keep, p, zeroVec()).getResult();
  };
  keyProducts(QF, KT, PS, [&](Value i, ArrayRef<Value> at, Value s) {
    Value p = select(
        fused, vecType(), [&] { return probabilities(i, s); },
        [&] { return maskInBlock() ? masked(i, at[1], probabilities(i, s)) : s; });
    storeVec(p, PS, at);
  });
}

/// PS (raw scores) -> P per element: 0 outside [rows) x [cols) and where the
/// mask (unless `full`) or the mask_mod drops it, else exp(score_mod(s) -
/// lse); SL = score_mod'(s) where P is kept (0 elsewhere, so dS is 0 there).
void BackwardKernelBuilder::elementPass(Value head, Value q0, Value rows, Value k0, Value cols,
                                        Value full) {
  double scale = op.getScaleOrDefault();
  auto onZero = [&](Value isZero) { ifThen(isZero, [&] { fail(b, 1); }); };
  auto readInput = [&](Operation *load, ArrayRef<Value> indices) {
    return loadInput(load, indices);
  };
  Type f32Type = b.getF32Type();
  loop(0, blockQ, 1, [&](Value i) {
    loop(0, blockKv, 1, [&](Value j) {
      Value qPos = add(q0, i), kPos = add(k0, j);
      Value inside = arith::AndIOp::create(b, lt(i, rows), lt(j, cols));
      auto ifOp = scf::IfOp::create(b, TypeRange{f32Type, f32Type}, inside, true, true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value s = arith::MulFOp::create(b, load(PS, {i, j}), f32(scale));
        Value slope = f32(1);
        if (scoreMod) {
          // d / d score, and d / d each table element it reads (recorded).
          SmallVector<Operation *> seeds = {nullptr};
          if (GS)
            llvm::append_range(seeds, tables->seeds());
          ModSlopes mod = inlineModWithSlopes(b, b.getLoc(), op.getScoreMod(),
                                              {s, batch, head, qPos, kPos}, onZero, readInput,
                                              seeds);
          s = mod.value;
          slope = mod.slopes.front();
          if (GS)
            tables->record(mod, i, j);
        }
        Value keep = select(full, b.getI1Type(),
                            [&] { return arith::ConstantIntOp::create(b, 1, 1).getResult(); },
                            [&] {
                              Value k = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), qPos,
                                                      kPos, seqQ, seqKv);
                              if (!op.getMaskMod().empty())
                                k = arith::AndIOp::create(
                                    b, k,
                                    inlineMod(b, b.getLoc(), op.getMaskMod(),
                                              {batch, head, qPos, kPos}, onZero, readInput));
                              return k;
                            });
        Value t = arith::SubFOp::create(b, arith::MulFOp::create(b, s, f32(kLog2e)),
                                        load(LS, {i}));
        Value p = math::Exp2Op::create(b, t);
        scf::YieldOp::create(b, ValueRange{arith::SelectOp::create(b, keep, p, f32(0)),
                                           arith::SelectOp::create(b, keep, slope, f32(0))});
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, ValueRange{f32(0), f32(0)});
      }
      store(ifOp.getResult(0), PS, {i, j});
      if (scoreMod)
        store(ifOp.getResult(1), SL, {i, j});
    });
  });
}

/// DS = P (d_out . v - D) (times SL with a score_mod), over the pair.
void BackwardKernelBuilder::gradientScores() {
  keyProducts(DOF, VT, DS, [&](Value i, ArrayRef<Value> at, Value dp) {
    Value ds = arith::MulFOp::create(
        b, loadVec(PS, at), arith::SubFOp::create(b, dp, splat(load(D, {i}))));
    if (GS)
      storeVec(ds, GS, at);
    if (scoreMod)
      ds = arith::MulFOp::create(b, ds, loadVec(SL, at));
    storeVec(ds, DS, at);
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

/// The pair's share of the f32 inputs' gradients: G = P (dP - D) times the
/// slopes the element pass recorded, where G is not 0 (kept, inside the tile).
void BackwardKernelBuilder::inputPass(Value chunk, Value rows, Value cols) {
  loop(0, rows, 1, [&](Value i) {
    loop(0, cols, 1, [&](Value j) {
      Value g = load(GS, {i, j});
      Value nonzero = arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, g, f32(0));
      ifThen(nonzero, [&] { tables->accumulate(g, i, j, batch, kvHead, chunk); });
    });
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
    SmallVector<Type> types = args;
    types.append(rank, b.getIndexType());
    std::string name = phaseFunctionName(kernel.getSymName(), "tile", phase);
    auto func = func::FuncOp::create(b, name, FunctionType::get(ctx, types, {b.getI32Type()}));
    func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    return func;
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
