//===- MultiHeadKernel.cpp - attn.multihead_attention to CPU tile functions ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A multi-head attention kernel's three phases (KernelInterface.h,
// multiHeadInterface): two projections around the body's attention.
//
//   qkv, item (b, m, n): a 64 x 64 tile of X W_in^T + b_in into the f32
//     scratch q, k or v (column tile n: q's tiles, then k's, then v's).
//   attention, item (b, h, q_tile): the body's attn.flash, lowered as any
//     attention's tile function, called on the scratch (its params are the
//     kernel's, with seq_kv = seq, or key_lengths[b] with key padding: the
//     verifier allows only masks that do not depend on seq_kv then).
//   out, item (b, m, n): a 64 x 64 tile of attn W_out^T + b_out into out.
//
// A product tile packs its 64 weight columns (WT [K, 64], f32: nn.Linear's
// [out, in] weights are transposed w x w lanes at a time in registers,
// MatMul's [in, out] ones read as rows) and, 16-bit, its 64 input rows (AF
// [64, K], f32; f32 rows are read in place), then runs register blocks of 6
// rows x 2 or 4 vectors over K, as the attention kernels' P V products do.
// Up to kFewRows rows, nn.Linear weights are read in place instead (fewRows).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"

#include "FlashKernelBuilder.h"
#include "LoopBuilder.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Interface/KernelInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr int64_t kTile = attnc::kProjectionTile;

/// Up to this many rows, nn.Linear weights are read in place (fewRows)
/// rather than packed (Zen 3, embed_dim 768: 1.9x nn.MultiheadAttention at 4
/// rows this way; at 17-32 rows packing was 1.3-1.5x faster than this).
constexpr int64_t kFewRows = 8;

/// One product tile: rows [m0, m0 + rows) of A (K wide, row `aRow` apart)
/// times columns [col0, col0 + cols) of W^T, plus the bias, into `dest`.
struct ProductTile {
  Value aBuf, aBase, aStride;  // A's row m0 and its row stride
  int64_t k;                   // the reduction's length
  Value rows;                  // rows of the tile (<= 64)
  Value wBuf, wStride, wCol0;  // W, its row stride, the tile's first column in W^T
  Value cols;                  // columns of the tile (<= 64)
  Value biasBuf, biasStride;   // an empty view: no bias
  Value dest, destBase, destStride; // where (row m0, column 0 of the tile) goes
};

class MultiHeadKernelBuilder : VectorLoopBuilder {
public:
  MultiHeadKernelBuilder(MultiHeadAttentionOp op, const CpuKernelConfig &config,
                         ImplicitLocOpBuilder &b)
      : VectorLoopBuilder(b, config.vectorWidth), op(op), cfg(config),
        heads(op.getAttention().getHeads()), kvHeads(op.getAttention().getKvHeads()),
        dim(op.getAttention().getDim()), embed(op.getEmbedSize()),
        blockVectors(w >= 16 ? 4 : 2) {}

  void buildProjection(func::FuncOp func);
  void buildAttention(func::FuncOp func, func::FuncOp flash);
  void buildOutput(func::FuncOp func);

private:
  int64_t roundUp(int64_t n) const { return (n + w - 1) / w * w; }
  ArrayRef<BlockArgument> readArgs(ArrayRef<BlockArgument> args);
  Value loadDynamicLanes(Value buf, Value at, Value valid);
  Value lanesOf(Value count, Value from) {
    return arith::MaxSIOp::create(b, idx(0), minIdx(idx(w), arith::SubIOp::create(b, count, from)));
  }
  void packRows(const ProductTile &t, Value AF, int64_t kPadded);
  void packColumns(const ProductTile &t, Value WT, int64_t kPadded);
  void product(const ProductTile &t);
  void fewRows(const ProductTile &t);
  void blocks(const ProductTile &t);
  void storeLanes(Value x, Value dest, Value at, Value valid);

  MultiHeadAttentionOp op;
  CpuKernelConfig cfg;
  int64_t heads, kvHeads, dim, embed, blockVectors;
  Type elemType;
  Value xBuf, wInBuf, bInBuf, wOutBuf, bOutBuf, outBuf, lengthsBuf, qBuf, kBuf, vBuf, attnBuf;
};

ArrayRef<BlockArgument> MultiHeadKernelBuilder::readArgs(ArrayRef<BlockArgument> args) {
  xBuf = args[0], wInBuf = args[1], bInBuf = args[2], wOutBuf = args[3], bOutBuf = args[4];
  outBuf = args[5];
  if (op.hasKeyLengths()) {
    lengthsBuf = args[6];
    args = args.drop_front();
  }
  qBuf = args[6], kBuf = args[7], vBuf = args[8], attnBuf = args[9];
  params = args[10];
  elemType = op.getDtype();
  return args.drop_front(11);
}

/// `valid` (0 to w, at run time) lanes from `at` as f32, the others 0 and
/// not read. 16-bit types load whole vectors or lane by lane: LLVM expands
/// their masked loads on AVX2 into calls libgcc before 13 lacks.
Value MultiHeadKernelBuilder::loadDynamicLanes(Value buf, Value at, Value valid) {
  Type elem = cast<MemRefType>(buf.getType()).getElementType();
  auto type = VectorType::get({w}, elem);
  if (elem.isF32()) {
    Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                              ValueRange{valid});
    Value pass = arith::ConstantOp::create(b, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
    return vector::MaskedLoadOp::create(b, type, buf, ValueRange{at}, mask, pass);
  }
  Value whole = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, valid, idx(w));
  return select(whole, vecType(), [&] {
    Value x = vector::LoadOp::create(b, type, buf, ValueRange{at});
    return arith::ExtFOp::create(b, vecType(), x).getResult();
  }, [&] {
    Value x = zeroVec();
    for (int64_t lane = 0; lane < w; ++lane) {
      Value e = select(lt(idx(lane), valid), b.getF32Type(), [&] {
        Value y = memref::LoadOp::create(b, buf, ValueRange{add(at, idx(lane))});
        return arith::ExtFOp::create(b, b.getF32Type(), y).getResult();
      }, [&] { return f32(0); });
      x = vector::InsertOp::create(b, e, x, ArrayRef<int64_t>{lane});
    }
    return x;
  });
}

/// AF = the tile's rows of A (0 past `rows` and past K).
void MultiHeadKernelBuilder::packRows(const ProductTile &t, Value AF, int64_t kPadded) {
  loop(0, kTile, 1, [&](Value i) {
    ifThenElse(
        lt(i, t.rows),
        [&] {
          Value row = add(t.aBase, mul(i, t.aStride));
          for (int64_t k = 0; k < kPadded; k += w)
            storeVec(loadDynamicLanes(t.aBuf, add(row, idx(k)), idx(std::min(w, t.k - k))),
                     AF, {i, idx(k)});
        },
        [&] {
          for (int64_t k = 0; k < kPadded; k += w)
            storeVec(zeroVec(), AF, {i, idx(k)});
        });
  });
}

/// WT = the tile's columns of W^T (0 past `cols` and past K): MatMul
/// weights [K, N] row by row; nn.Linear's [N, K] w x w lanes at a time,
/// transposed in registers.
void MultiHeadKernelBuilder::packColumns(const ProductTile &t, Value WT, int64_t kPadded) {
  if (op.isOnnx()) {
    loop(0, kPadded, 1, [&](Value k) {
      Value inside = lt(k, idx(t.k));
      for (int64_t j = 0; j < kTile; j += w) {
        Value valid = arith::SelectOp::create(b, inside, lanesOf(t.cols, idx(j)), idx(0));
        Value at = add(mul(k, t.wStride), add(t.wCol0, idx(j)));
        storeVec(loadDynamicLanes(t.wBuf, at, valid), WT, {k, idx(j)});
      }
    });
    return;
  }
  loop(0, kTile, w, [&](Value j0) {
    for (int64_t k = 0; k < kPadded; k += w) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < w; ++r) {
        Value j = add(j0, idx(r));
        Value valid = arith::SelectOp::create(b, lt(j, t.cols), idx(std::min(w, t.k - k)), idx(0));
        Value row = mul(add(t.wCol0, minIdx(j, arith::SubIOp::create(b, t.cols, idx(1)))),
                        t.wStride);
        block.push_back(loadDynamicLanes(t.wBuf, add(row, idx(k)), valid));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t l = 0; l < w; ++l)
        storeVec(block[l], WT, {idx(k + l), j0});
    }
  });
}

/// `valid` lanes of x into dest at `at`: one masked store for an f32
/// destination, else lane by lane, rounded to its element type.
void MultiHeadKernelBuilder::storeLanes(Value x, Value dest, Value at, Value valid) {
  Type elem = cast<MemRefType>(dest.getType()).getElementType();
  if (elem.isF32()) {
    Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                              ValueRange{valid});
    vector::MaskedStoreOp::create(b, dest, ValueRange{at}, mask, x);
    return;
  }
  for (int64_t lane = 0; lane < w; ++lane)
    ifThen(lt(idx(lane), valid), [&] {
      Value e = vector::ExtractOp::create(b, x, ArrayRef<int64_t>{lane});
      store(roundFromF32(b, b.getLoc(), e, elem, cfg.bf16Dot), dest, {add(at, idx(lane))});
    });
}

/// The tile for at most kFewRows rows against nn.Linear weights [N, K] (a
/// decode step's projection, a short prompt's): each weight row read in
/// place, from L1 for every group of 4 rows, along K, then summed across
/// lanes. A packed panel would read, transpose and write the weights for a
/// row or two.
void MultiHeadKernelBuilder::fewRows(const ProductTile &t) {
  constexpr int64_t groupRows = 4;
  int64_t whole = t.k / w * w;
  Value lastRow = arith::SubIOp::create(b, t.rows, idx(1));
  Value hasBias = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                        memref::DimOp::create(b, t.biasBuf, 0), idx(0));
  Type elem = cast<MemRefType>(t.dest.getType()).getElementType();
  loop(idx(0), t.cols, 1, [&](Value j) {
    Value wRow = mul(add(t.wCol0, j), t.wStride);
    Value bias = select(hasBias, b.getF32Type(), [&] {
      Value x = load(t.biasBuf, {mul(add(t.wCol0, j), t.biasStride)});
      return x.getType().isF32() ? x : arith::ExtFOp::create(b, b.getF32Type(), x).getResult();
    }, [&] { return f32(0); });
    loop(idx(0), t.rows, groupRows, [&](Value g0) {
      auto rowOf = [&](int64_t r) {
        return add(t.aBase, mul(minIdx(add(g0, idx(r)), lastRow), t.aStride));
      };
      auto step = [&](Value k, int64_t valid, ValueRange acc) {
        Value wv = loadDynamicLanes(t.wBuf, add(wRow, k), idx(valid));
        SmallVector<Value> next;
        for (int64_t r = 0; r < groupRows; ++r)
          next.push_back(
              fma(loadDynamicLanes(t.aBuf, add(rowOf(r), k), idx(valid)), wv, acc[r]));
        return next;
      };
      SmallVector<Value> acc = fold(
          idx(0), idx(whole), SmallVector<Value>(groupRows, zeroVec()),
          [&](Value k, ValueRange acc) { return step(k, w, acc); }, w);
      if (whole < t.k)
        acc = step(idx(whole), t.k - whole, acc);
      for (int64_t r = 0; r < groupRows; ++r) {
        Value i = add(g0, idx(r));
        ifThen(lt(i, t.rows), [&] {
          Value y = arith::AddFOp::create(
              b, vector::ReductionOp::create(b, vector::CombiningKind::ADD, acc[r]), bias);
          Value at = add(add(t.destBase, mul(i, t.destStride)), j);
          store(roundFromF32(b, b.getLoc(), y, elem, cfg.bf16Dot), t.dest, {at});
        });
      }
    });
  });
}

void MultiHeadKernelBuilder::product(const ProductTile &t) {
  if (!op.isOnnx()) {
    ifThenElse(lt(t.rows, idx(kFewRows + 1)), [&] { fewRows(t); }, [&] { blocks(t); });
    return;
  }
  blocks(t);
}

/// The tile as register blocks over packed weight columns.
void MultiHeadKernelBuilder::blocks(const ProductTile &t) {
  int64_t kPadded = roundUp(t.k), vectors = kTile / w;
  // f32 rows are read where they are (row `rows - 1` again past the tile's
  // rows, whose results are not stored); 16-bit ones widened into AF once.
  bool packed = !cast<MemRefType>(t.aBuf.getType()).getElementType().isF32();
  Value AF = packed ? stackBuffer({kTile, kPadded}) : Value();
  Value WT = stackBuffer({kPadded, kTile});
  if (packed)
    packRows(t, AF, kPadded);
  Value lastRow = arith::SubIOp::create(b, t.rows, idx(1));
  auto rowElement = [&](Value i, Value k) {
    if (packed)
      return load(AF, {i, k});
    return load(t.aBuf, {add(add(t.aBase, mul(minIdx(i, lastRow), t.aStride)), k)});
  };
  packColumns(t, WT, kPadded);
  // The bias of each column vector (0 past `cols`, or without a bias).
  Value hasBias = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                        memref::DimOp::create(b, t.biasBuf, 0), idx(0));
  SmallVector<Value> bias;
  for (int64_t c = 0; c < vectors; ++c) {
    Value valid = arith::SelectOp::create(b, hasBias, lanesOf(t.cols, idx(c * w)), idx(0));
    // A NULL bias is an empty view: every lane masked off, nothing read.
    Value at = arith::SelectOp::create(b, hasBias, mul(add(t.wCol0, idx(c * w)), t.biasStride),
                                       idx(0));
    bias.push_back(loadDynamicLanes(t.biasBuf, at, valid));
  }
  // Register blocks of 6 rows x 2 vectors (16 registers) or 6 x 4 (32):
  // 10 blocks of 6 rows, then one of 4.
  constexpr int64_t rowsPerBlock = 6, wholeRows = kTile / rowsPerBlock * rowsPerBlock;
  auto rowBlock = [&](Value i0, int64_t blockRows) {
    ifThen(lt(i0, t.rows), [&] {
      for (int64_t c0 = 0; c0 < vectors; c0 += blockVectors) {
        int64_t vecs = std::min(blockVectors, vectors - c0);
        SmallVector<Value> init;
        for (int64_t r = 0; r < blockRows; ++r)
          for (int64_t c = 0; c < vecs; ++c)
            init.push_back(bias[c0 + c]);
        SmallVector<Value> acc = fold(idx(0), idx(t.k), init, [&](Value k, ValueRange acc) {
          SmallVector<Value> next, y;
          for (int64_t c = 0; c < vecs; ++c)
            y.push_back(loadVec(WT, {k, idx((c0 + c) * w)}));
          for (int64_t r = 0; r < blockRows; ++r) {
            Value x = splat(rowElement(add(i0, idx(r)), k));
            for (int64_t c = 0; c < vecs; ++c)
              next.push_back(fma(x, y[c], acc[r * vecs + c]));
          }
          return next;
        });
        for (int64_t r = 0; r < blockRows; ++r) {
          Value i = add(i0, idx(r));
          ifThen(lt(i, t.rows), [&] {
            Value row = add(t.destBase, mul(i, t.destStride));
            for (int64_t c = 0; c < vecs; ++c)
              storeLanes(acc[r * vecs + c], t.dest, add(row, idx((c0 + c) * w)),
                         lanesOf(t.cols, idx((c0 + c) * w)));
          });
        }
      }
    });
  };
  loop(0, wholeRows, rowsPerBlock, [&](Value i0) { rowBlock(i0, rowsPerBlock); });
  rowBlock(idx(wholeRows), kTile - wholeRows);
}

/// Item (b, m, n): column tile n of [q | k | v] = X W_in^T + b_in, rows
/// [64 m, 64 m + 64).
void MultiHeadKernelBuilder::buildProjection(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  Value batch = coords[0], m0 = mul(coords[1], idx(kTile)), n = coords[2];
  Value seq = readParam(ATTNC_P_SEQ_Q);
  int64_t qWidth = heads * dim, kvWidth = kvHeads * dim;
  int64_t qTiles = (qWidth + kTile - 1) / kTile, kvTiles = (kvWidth + kTile - 1) / kTile;
  Value isQ = lt(n, idx(qTiles)), isK = lt(n, idx(qTiles + kvTiles));
  auto pick = [&](Value q, Value k, Value v) {
    return arith::SelectOp::create(b, isQ, q, arith::SelectOp::create(b, isK, k, v)).getResult();
  };
  Value first = pick(idx(0), idx(qTiles), idx(qTiles + kvTiles));
  Value col0 = mul(arith::SubIOp::create(b, n, first), idx(kTile));
  Value width = pick(idx(qWidth), idx(kvWidth), idx(kvWidth));
  Value wCol = add(pick(idx(0), idx(qWidth), idx(qWidth + kvWidth)), col0);
  auto strideOf = [&](int64_t q, int64_t k, int64_t v) {
    return pick(readParam(q), readParam(k), readParam(v));
  };
  // Scratch strides (batch, head, seq): row m0 of batch b, and the row stride.
  Value destBatch = strideOf(ATTNC_P_Q_STRIDES, ATTNC_P_K_STRIDES, ATTNC_P_V_STRIDES);
  Value destSeq = strideOf(ATTNC_P_Q_STRIDES + 2, ATTNC_P_K_STRIDES + 2, ATTNC_P_V_STRIDES + 2);
  Value xB = readParam(ATTNC_P_X_STRIDES), xS = readParam(ATTNC_P_X_STRIDES + 1);
  ProductTile t;
  t.aBuf = xBuf, t.aBase = add(mul(batch, xB), mul(m0, xS)), t.aStride = xS, t.k = embed;
  t.rows = minIdx(idx(kTile), arith::SubIOp::create(b, seq, m0));
  t.wBuf = wInBuf, t.wStride = readParam(ATTNC_P_IN_WEIGHT_STRIDES), t.wCol0 = wCol;
  t.cols = minIdx(idx(kTile), arith::SubIOp::create(b, width, col0));
  t.biasBuf = bInBuf, t.biasStride = readParam(ATTNC_P_IN_BIAS_STRIDES);
  t.dest = pick(qBuf, kBuf, vBuf);
  t.destBase = add(add(mul(batch, destBatch), mul(m0, destSeq)), col0);
  t.destStride = destSeq;
  product(t);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

/// Item (b, h, q_tile): the body's attention tile function on the scratch,
/// with seq_kv = seq (key padding: key_lengths[b]) in a copy of the params.
void MultiHeadKernelBuilder::buildAttention(func::FuncOp func, func::FuncOp flash) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  auto local = memref::AllocaOp::create(
      b, MemRefType::get({ATTNC_P_MULTIHEAD_COUNT}, b.getI64Type()));
  for (int64_t p = 0; p < ATTNC_P_MULTIHEAD_COUNT; ++p)
    store(load(params, {idx(p == ATTNC_P_SEQ_KV ? ATTNC_P_SEQ_Q : p)}), local, {idx(p)});
  if (lengthsBuf) { // the runtime checked 0 <= key_lengths[b] <= seq
    Value at = mul(coords[0], readParam(ATTNC_P_KEY_LENGTHS_STRIDES));
    Value keys = arith::ExtSIOp::create(b, b.getI64Type(), load(lengthsBuf, {at}));
    store(keys, local, {idx(ATTNC_P_SEQ_KV)});
  }
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  // outputs = [out]: the tile function reads no lse; an empty view.
  Value noLse = memref::CastOp::create(
      b, f32Buf, memref::AllocaOp::create(b, MemRefType::get({0}, b.getF32Type())));
  SmallVector<Value> args = {qBuf, kBuf, vBuf, attnBuf, noLse,
                             memref::CastOp::create(b, i64Buf, local)};
  args.append(coords.begin(), coords.end());
  auto call = func::CallOp::create(b, flash, args);
  func::ReturnOp::create(b, call.getResults());
}

/// Item (b, m, n): column tile n of out = attn W_out^T + b_out, rows [64 m,
/// 64 m + 64).
void MultiHeadKernelBuilder::buildOutput(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  Value batch = coords[0], m0 = mul(coords[1], idx(kTile)), col0 = mul(coords[2], idx(kTile));
  Value seq = readParam(ATTNC_P_SEQ_Q);
  Value aB = readParam(ATTNC_P_OUT_STRIDES), aS = readParam(ATTNC_P_OUT_STRIDES + 2);
  Value oB = readParam(ATTNC_P_EMBED_OUT_STRIDES), oS = readParam(ATTNC_P_EMBED_OUT_STRIDES + 1);
  ProductTile t;
  t.aBuf = attnBuf, t.aBase = add(mul(batch, aB), mul(m0, aS)), t.aStride = aS;
  t.k = heads * dim;
  t.rows = minIdx(idx(kTile), arith::SubIOp::create(b, seq, m0));
  t.wBuf = wOutBuf, t.wStride = readParam(ATTNC_P_OUT_WEIGHT_STRIDES), t.wCol0 = col0;
  t.cols = minIdx(idx(kTile), arith::SubIOp::create(b, idx(embed), col0));
  t.biasBuf = bOutBuf, t.biasStride = readParam(ATTNC_P_OUT_BIAS_STRIDES);
  t.dest = outBuf, t.destBase = add(add(mul(batch, oB), mul(m0, oS)), col0), t.destStride = oS;
  product(t);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

} // namespace

LogicalResult mlir::attn::buildCpuMultiHeadKernel(MultiHeadAttentionOp op,
                                                  const CpuKernelConfig &config) {
  auto kernel = cast<KernelOp>(op->getParentOp());
  auto attention = dyn_cast<FlashOp>(op.getAttention().getOperation());
  if (!attention)
    return op.emitOpError("expects its attention tiled (attn.flash); run attn-tile-flash first");
  // The attention's tile function first, under a name of its own: the
  // kernel's phases take <name>_tile and <name>_<phase>_tile.
  FailureOr<func::FuncOp> flash = buildCpuFlashKernel(attention, config);
  if (failed(flash))
    return failure();
  (*flash)->removeAttr("llvm.emit_c_interface");
  (*flash).setSymName((kernel.getSymName() + "__flash_tile").str());
  MLIRContext *ctx = kernel.getContext();
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, op.getDtype());
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  SmallVector<Type> args(6, elemBuf);
  if (op.hasKeyLengths())
    args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI32Type()));
  args.append(4, f32Buf); // q, k, v, attn
  args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI64Type()));
  auto builder = [&] { return std::make_unique<ImplicitLocOpBuilder>(op.getLoc(), ctx); };
  auto body = builder();
  MultiHeadKernelBuilder(op, config, *body)
      .buildProjection(createTileFunction(b, kernel, args, "", 3));
  body = builder();
  MultiHeadKernelBuilder(op, config, *body)
      .buildAttention(createTileFunction(b, kernel, args, "attention", 3), *flash);
  body = builder();
  MultiHeadKernelBuilder(op, config, *body)
      .buildOutput(createTileFunction(b, kernel, args, "out", 3));
  return success();
}
