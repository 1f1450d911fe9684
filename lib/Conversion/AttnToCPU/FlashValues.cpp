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

/// acc[i, :] = acc[i, :] * ALPHA[i] + sum_j P[i, j] V[k0 + j, :], register
/// blocked like Q K^T: a block of pvRows query rows x pvVectors vectors of
/// head_dim stays in registers for all keys of the tile; per key, pvVectors
/// loads of V (in place, no copy) and pvRows broadcasts of P feed
/// pvRows * pvVectors FMAs, and each accumulator is rescaled once per tile.
/// The head_dim slices are the outer loop so one slice of V stays in L1
/// across all row blocks. Rows past `rows` (last query tile) are computed on
/// zero queries and never written out.
void FlashKernelBuilder::accumulatePV(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth;
  int64_t rowBlock = largestDivisorUpTo(blockQ, cfg.pvRows);
  int64_t vecBlock = largestDivisorUpTo(dimPadded / w, cfg.pvVectors);
  for (int64_t d0 = 0; d0 < dimPadded; d0 += vecBlock * w) {
    loop(0, blockQ, rowBlock, [&](Value i0) {
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
      auto sum = b.create<scf::ForOp>(
          idx(0), cols, idx(1), init,
          [&](OpBuilder &nb, Location loc, Value j, ValueRange acc) {
            Value row = valueRowOffset(nb, loc, k0, j);
            SmallVector<Value> v, next;
            for (int64_t c = 0; c < vecBlock; ++c)
              v.push_back(loadValue(nb, loc, row, d0 + c * w));
            for (int64_t r = 0; r < rowBlock; ++r) {
              Value p = nb.create<vector::BroadcastOp>(
                  loc, vecType(), nb.create<memref::LoadOp>(loc, ST, ValueRange{j, rowIdx[r]}));
              for (int64_t c = 0; c < vecBlock; ++c)
                next.push_back(
                    nb.create<vector::FMAOp>(loc, p, v[c], acc[r * vecBlock + c]));
            }
            nb.create<scf::YieldOp>(loc, next);
          });
      for (int64_t r = 0; r < rowBlock; ++r)
        for (int64_t c = 0; c < vecBlock; ++c)
          b.create<vector::StoreOp>(sum.getResult(r * vecBlock + c), Acc,
                                    ValueRange{rowIdx[r], idx(d0 + c * w)});
    });
  }
}
