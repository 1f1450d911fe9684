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
//   qkv, item (b, m, n): a 256 x 64 tile of X W_in^T + b_in into the f32
//     scratch q, k or v (column tile n: q's tiles, then k's, then v's).
//   attention, item (b, h, q_tile): the body's attn.flash, lowered as any
//     attention's tile function, called on the scratch (its params are the
//     kernel's, with seq_kv = seq, or key_lengths[b] with key padding: the
//     verifier allows only masks that do not depend on seq_kv then).
//   out, item (b, m, n): a 256 x 64 tile of attn W_out^T + b_out into out.
//
// The products are ProductBuilder's (ProjectionProduct.h).
//
//===----------------------------------------------------------------------===//

#include "ProjectionProduct.h"
#include "attnc/Conversion/Common/KernelEntry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr int64_t kTile = kProductTile;

class MultiHeadKernelBuilder : ProductBuilder {
public:
  MultiHeadKernelBuilder(MultiHeadAttentionOp op, const CpuKernelConfig &config,
                         ImplicitLocOpBuilder &b)
      : ProductBuilder(b, config, op.isOnnx()), op(op),
        heads(op.getAttention().getHeads()), kvHeads(op.getAttention().getKvHeads()),
        dim(op.getAttention().getDim()), embed(op.getEmbedSize()) {}

  void buildProjection(func::FuncOp func);
  void buildAttention(func::FuncOp func, func::FuncOp flash);
  void buildOutput(func::FuncOp func);

private:
  ArrayRef<BlockArgument> readArgs(ArrayRef<BlockArgument> args);

  MultiHeadAttentionOp op;
  int64_t heads, kvHeads, dim, embed;
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
  return args.drop_front(11);
}

/// Item (b, m, n): column tile n of [q | k | v] = X W_in^T + b_in, rows
/// [256 m, 256 m + 256).
void MultiHeadKernelBuilder::buildProjection(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  Value batch = coords[0], m0 = mul(coords[1], idx(kProductRows)), n = coords[2];
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
  t.rows = minIdx(idx(kProductRows), arith::SubIOp::create(b, seq, m0));
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

/// Item (b, m, n): column tile n of out = attn W_out^T + b_out, rows [256 m,
/// 256 m + 256).
void MultiHeadKernelBuilder::buildOutput(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  Value batch = coords[0], m0 = mul(coords[1], idx(kProductRows));
  Value col0 = mul(coords[2], idx(kTile));
  Value seq = readParam(ATTNC_P_SEQ_Q);
  Value aB = readParam(ATTNC_P_OUT_STRIDES), aS = readParam(ATTNC_P_OUT_STRIDES + 2);
  Value oB = readParam(ATTNC_P_EMBED_OUT_STRIDES), oS = readParam(ATTNC_P_EMBED_OUT_STRIDES + 1);
  ProductTile t;
  t.aBuf = attnBuf, t.aBase = add(mul(batch, aB), mul(m0, aS)), t.aStride = aS;
  t.k = heads * dim;
  t.rows = minIdx(idx(kProductRows), arith::SubIOp::create(b, seq, m0));
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
