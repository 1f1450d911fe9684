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
  Value base = nb.create<arith::AddIOp>(loc, row, nb.create<arith::ConstantIndexOp>(loc, d));
  if (widen) // VF rows are zero padded to dimPadded
    return nb.create<vector::LoadOp>(loc, vecType(), VF, ValueRange{base});
  if (d + w <= dim)
    return nb.create<vector::LoadOp>(loc, vecType(), vBuf, ValueRange{base});
  auto maskType = VectorType::get({w}, nb.getI1Type());
  Value mask = nb.create<vector::CreateMaskOp>(
      loc, maskType, ValueRange{nb.create<arith::ConstantIndexOp>(loc, dim - d)});
  return nb.create<vector::MaskedLoadOp>(loc, vecType(), vBuf, ValueRange{base}, mask,
                                        zeroVector(nb, loc));
}

/// Where value row j of the tile starts: in v itself, or in VF (widened).
Value FlashKernelBuilder::valueRowOffset(OpBuilder &nb, Location loc, Value k0, Value j) {
  if (widen)
    return nb.create<arith::MulIOp>(loc, j, nb.create<arith::ConstantIndexOp>(loc, dimPadded));
  Value key = nb.create<arith::AddIOp>(loc, k0, j);
  return nb.create<arith::AddIOp>(loc, vBatchHead, nb.create<arith::MulIOp>(loc, key, vS.seq));
}

/// acc = acc * ALPHA + P V as register blocks of pvRows query rows x
/// pvVectors vectors of head_dim that stay in registers over the `trips`
/// steps of `step` (given the block's rows and first head_dim column), each
/// accumulator rescaled once per tile. The head_dim slices are the outer loop
/// so one slice of V stays in L1 across all row blocks. Rows past `rows`
/// (last query tile) are computed on zero queries and never written out.
void FlashKernelBuilder::valueBlocks(Value trips, ValueStep step) {
  int64_t w = cfg.vectorWidth;
  int64_t rowBlock = largestDivisorUpTo(blockQ, cfg.pvRows);
  int64_t vecBlock = largestDivisorUpTo(dimPadded / w, cfg.pvVectors);
  for (int64_t d0 = 0; d0 < dimPadded; d0 += vecBlock * w) {
    loop(0, blockQ, rowBlock, [&](Value i0) {
      if (d0 == 0)
        prefetchValueRows(b.create<arith::DivUIOp>(i0, idx(rowBlock)), blockQ / rowBlock);
      SmallVector<Value> rowIdx, init;
      for (int64_t r = 0; r < rowBlock; ++r) {
        rowIdx.push_back(add(i0, idx(r)));
        Value alpha = b.create<vector::BroadcastOp>(
            vecType(), b.create<memref::LoadOp>(ALPHA, ValueRange{rowIdx.back()}));
        for (int64_t c = 0; c < vecBlock; ++c)
          init.push_back(b.create<arith::MulFOp>(
              b.create<vector::LoadOp>(vecType(), Acc,
                                       ValueRange{rowIdx.back(), idx(d0 + c * w)}),
              alpha));
      }
      auto sums = b.create<scf::ForOp>(
          idx(0), trips, idx(1), init,
          [&](OpBuilder &nb, Location loc, Value t, ValueRange acc) {
            nb.create<scf::YieldOp>(loc, step(nb, loc, t, rowIdx, d0, vecBlock, acc));
          });
      for (int64_t r = 0; r < rowBlock; ++r)
        for (int64_t c = 0; c < vecBlock; ++c)
          b.create<vector::StoreOp>(sums.getResult(r * vecBlock + c), Acc,
                                    ValueRange{rowIdx[r], idx(d0 + c * w)});
    });
  }
}

/// acc[i, :] = acc[i, :] * ALPHA[i] + sum_j P[i, j] V[k0 + j, :]: per key,
/// pvVectors loads of V (in place, no copy; or widened in VF) and pvRows
/// broadcasts of P feed pvRows * pvVectors FMAs.
void FlashKernelBuilder::accumulatePV(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth;
  valueBlocks(cols, [&](OpBuilder &nb, Location loc, Value j, ArrayRef<Value> rowIdx,
                        int64_t d0, int64_t vecBlock, ValueRange acc) {
    Value row = valueRowOffset(nb, loc, k0, j);
    SmallVector<Value> v, next;
    for (int64_t c = 0; c < vecBlock; ++c)
      v.push_back(loadValue(nb, loc, row, d0 + c * w));
    for (auto [r, i] : llvm::enumerate(rowIdx)) {
      Value p = nb.create<vector::BroadcastOp>(
          loc, vecType(), nb.create<memref::LoadOp>(loc, ST, ValueRange{j, i}));
      for (int64_t c = 0; c < vecBlock; ++c)
        next.push_back(nb.create<vector::FMAOp>(loc, p, v[c], acc[r * vecBlock + c]));
    }
    return next;
  });
}
