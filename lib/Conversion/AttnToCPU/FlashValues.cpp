//===- FlashValues.cpp - acc += P V for a KV tile ---------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The P V product of a visited tile into the accumulators, register blocked,
// v read in place.
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// One vector of a V row (`row`: the flat offset of its element 0), lanes
/// [d, d + w) of head_dim, read in place; a head_dim tail is a masked load
/// (zeros past head_dim).
Value FlashKernelBuilder::loadValue(OpBuilder &nb, Location loc, Value row, int64_t d) {
  int64_t w = cfg.vectorWidth;
  Value base = arith::AddIOp::create(nb, loc, row, arith::ConstantIndexOp::create(nb, loc, d));
  if (widen) // VF rows are zero padded to dimPadded
    return vector::LoadOp::create(nb, loc, vecType(), VF, ValueRange{base});
  if (d + w <= dim)
    return vector::LoadOp::create(nb, loc, vecType(), vBuf, ValueRange{base});
  auto maskType = VectorType::get({w}, nb.getI1Type());
  Value mask = vector::CreateMaskOp::create(
      nb, loc, maskType, ValueRange{arith::ConstantIndexOp::create(nb, loc, dim - d)});
  return vector::MaskedLoadOp::create(nb, loc, vecType(), vBuf, ValueRange{base}, mask,
                                      zeroVector(nb, loc));
}

/// Where value row j of the tile starts: in v itself, or in VF (widened).
Value FlashKernelBuilder::valueRowOffset(OpBuilder &nb, Location loc, Value k0, Value j) {
  if (widen)
    return arith::MulIOp::create(nb, loc, j, arith::ConstantIndexOp::create(nb, loc, dimPadded));
  Value key = arith::AddIOp::create(nb, loc, k0, j);
  return arith::AddIOp::create(nb, loc, vBatchHead, arith::MulIOp::create(nb, loc, key, vS.seq));
}

/// acc = acc * ALPHA + P V as register blocks of pvRows query rows (of
/// [rowLo, rowHi)) x pvVectors vectors of head_dim that stay in registers
/// over the steps of `step` that `trips` gives for their vector's keys
/// (vectorKeys), given the block's rows and first head_dim column; each
/// accumulator rescaled once per tile (unless `rescale` is false: ALPHA is 1
/// after a fused tile that stood). The head_dim slices are the outer loop
/// so one slice of V stays in L1 across all row blocks. Rows past `rows`
/// (last query tile) are computed on zero queries and never written out.
void FlashKernelBuilder::valueBlocks(TripRange trips, ValueStep step, bool rescale) {
  int64_t w = cfg.vectorWidth;
  int64_t rowBlock = valueRowBlock();
  int64_t vecBlock = largestDivisorUpTo(dimPadded / w, cfg.pvVectors);
  for (int64_t d0 = 0; d0 < dimPadded; d0 += vecBlock * w) {
    loop(rowLo, rowHi, rowBlock, [&](Value i0) {
      if (d0 == 0)
        prefetchValueRows(arith::DivUIOp::create(b, i0, idx(rowBlock)), blockQ / rowBlock);
      SmallVector<Value> rowIdx, init;
      for (int64_t r = 0; r < rowBlock; ++r) {
        rowIdx.push_back(add(i0, idx(r)));
        Value alpha;
        if (rescale)
          alpha = vector::BroadcastOp::create(
              b, vecType(), memref::LoadOp::create(b, ALPHA, ValueRange{rowIdx.back()}));
        for (int64_t c = 0; c < vecBlock; ++c) {
          Value acc =
              vector::LoadOp::create(b, vecType(), Acc, ValueRange{rowIdx.back(), idx(d0 + c * w)});
          init.push_back(rescale ? arith::MulFOp::create(b, acc, alpha).getResult() : acc);
        }
      }
      auto [keysLo, keysHi] = vectorKeys(i0);
      auto [tripLo, tripHi] = trips(keysLo, keysHi);
      auto sums = scf::ForOp::create(b, tripLo, tripHi, idx(1), init,
                                     [&](OpBuilder &nb, Location loc, Value t, ValueRange acc) {
                                       scf::YieldOp::create(
                                           nb, loc, step(nb, loc, t, rowIdx, d0, vecBlock, acc));
                                     });
      for (int64_t r = 0; r < rowBlock; ++r)
        for (int64_t c = 0; c < vecBlock; ++c)
          vector::StoreOp::create(b, sums.getResult(r * vecBlock + c), Acc,
                                  ValueRange{rowIdx[r], idx(d0 + c * w)});
      unrollSteps(sums);
    });
  }
}

/// acc[i, :] = acc[i, :] * ALPHA[i] + sum_j P[i, j] V[k0 + j, :] (ALPHA left out
/// without `rescale`): per key,
/// pvVectors loads of V (in place, no copy; or widened in VF) and pvRows
/// broadcasts of P feed pvRows * pvVectors FMAs.
void FlashKernelBuilder::accumulatePV(Value k0, Value cols, bool rescale) {
  int64_t w = cfg.vectorWidth;
  auto step = [&](OpBuilder &nb, Location loc, Value j, ArrayRef<Value> rowIdx, int64_t d0,
                  int64_t vecBlock, ValueRange acc) {
    Value row = valueRowOffset(nb, loc, k0, j);
    SmallVector<Value> v, next;
    for (int64_t c = 0; c < vecBlock; ++c)
      v.push_back(loadValue(nb, loc, row, d0 + c * w));
    for (auto [r, i] : llvm::enumerate(rowIdx)) {
      Value p = vector::BroadcastOp::create(nb, loc, vecType(),
                                            memref::LoadOp::create(nb, loc, ST, ValueRange{j, i}));
      for (int64_t c = 0; c < vecBlock; ++c)
        next.push_back(vector::FMAOp::create(nb, loc, p, v[c], acc[r * vecBlock + c]));
    }
    return next;
  };
  auto trips = [&](Value lo, Value hi) { return std::pair{lo, minIdx(hi, cols)}; };
  valueBlocks(trips, step, rescale);
}
