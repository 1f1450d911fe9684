//===- FlashBf16Dot.cpp - Q K^T and P V on AVX512-BF16 dot products -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// bf16 kernels on targets with AVX512-BF16. `vdpbf16ps acc, a, b` adds to
// each f32 lane a[2l] b[2l] + a[2l+1] b[2l+1]: two multiply-adds of a pair
// per lane, twice an f32 FMA's work per instruction. Both products keep their
// f32 form (lanes = query rows for S^T, head_dim for acc) with the pairs
// running along the reduced dimension, so the operands are packed in pairs:
//
//   QP[dp][2i + e] = q[i][2dp + e]        (d pairs; once per query tile)
//   S^T[j][i..]   += QP[dp][2i..] . (k[j][2dp], k[j][2dp + 1])
//                                         (a k pair is one 32-bit broadcast,
//                                          read in place)
//   VP[jp][2d + e] = v[2jp + e][d]        (key pairs; once per visited tile)
//   PB[jp][2i + e] = bf16(P[i][2jp + e])  (by the softmax, which stays f32)
//   acc[i][d..]   += VP[jp][2d..] . (PB[jp][2i], PB[jp][2i + 1])
//
// P is rounded to bf16 before P V, as FlashAttention does; scores, softmax
// state and accumulators are f32. The scale is applied in f32, by the softmax
// (scaleInSoftmax) or to S^T (scaling bf16 q would round it a second time).
// P's exp is a degree-3 polynomial (relative 1e-4, below bf16's rounding).
//
//===----------------------------------------------------------------------===//

#include "FlashKernelBuilder.h"

#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// Lanes of a and b alternating: a0 b0 a1 b1 ... (two n-lane vectors).
Value interleave(OpBuilder &b, Location loc, Value x, Value y) {
  int64_t n = cast<VectorType>(x.getType()).getNumElements();
  SmallVector<int64_t> mask;
  for (int64_t l = 0; l < n; ++l) {
    mask.push_back(l);
    mask.push_back(n + l);
  }
  return vector::ShuffleOp::create(b, loc, x, y, mask);
}

} // namespace

VectorType FlashKernelBuilder::pairVecType() {
  return VectorType::get({2 * cfg.vectorWidth}, b.getBF16Type());
}

/// The pair of bf16 at `at` (a 32-bit load) in every 32-bit lane.
Value FlashKernelBuilder::broadcastPair(OpBuilder &nb, Location loc, Value buf,
                                        ValueRange at) {
  Value pair = vector::LoadOp::create(nb, loc, VectorType::get({2}, nb.getBF16Type()), buf, at);
  Value word = vector::ExtractOp::create(
      nb, loc, vector::BitCastOp::create(nb, loc, VectorType::get({1}, nb.getI32Type()), pair),
      ArrayRef<int64_t>{0});
  Value words = vector::BroadcastOp::create(
      nb, loc, VectorType::get({cfg.vectorWidth}, nb.getI32Type()), word);
  return vector::BitCastOp::create(nb, loc, pairVecType(), words);
}

/// QP from the query rows: a w x w block of 32-bit (d pair) words is
/// transposed in registers, like Q^T in the f32 kernel; the rest of the rows
/// and pairs element by element. Rows past `rows` stay zero.
void FlashKernelBuilder::packQueryPairs() {
  int64_t w = cfg.vectorWidth, pairs = dim / 2, pairsFull = pairs / w * w;
  loop(0, pairs, 1, [&](Value dp) {
    loop(0, 2 * blockQ, 1, [&](Value c) {
      memref::StoreOp::create(b, arith::ConstantOp::create(b, b.getZeroAttr(b.getBF16Type())), QP,
                              ValueRange{dp, c});
    });
  });
  auto words = VectorType::get({w}, b.getI32Type());
  Value rowsFull = mul(arith::DivUIOp::create(b, rows, idx(w)), idx(w));
  loop(0, rowsFull, w, [&](Value i0) {
    SmallVector<Value> bases;
    for (int64_t r = 0; r < w; ++r)
      bases.push_back(offset(qS, batch, head, add(q0, add(i0, idx(r)))));
    loop(0, pairsFull, w, [&](Value dp0) {
      SmallVector<Value> block;
      for (Value base : bases) {
        Value x =
            vector::LoadOp::create(b, pairVecType(), qBuf, ValueRange{add(base, mul(dp0, idx(2)))});
        block.push_back(vector::BitCastOp::create(b, words, x));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t c = 0; c < w; ++c)
        vector::StoreOp::create(b, vector::BitCastOp::create(b, pairVecType(), block[c]), QP,
                                ValueRange{add(dp0, idx(c)), mul(i0, idx(2))});
    });
  });
  auto scalarCopy = [&](Value rowLo, Value rowHi, int64_t dLo) {
    loop(rowLo, rowHi, 1, [&](Value i) {
      Value base = offset(qS, batch, head, add(q0, i));
      loop(dLo, idx(dim), 1, [&](Value d) {
        Value x = memref::LoadOp::create(b, qBuf, add(base, d));
        Value dp = arith::DivUIOp::create(b, d, idx(2));
        Value col = add(mul(i, idx(2)), arith::RemUIOp::create(b, d, idx(2)));
        memref::StoreOp::create(b, x, QP, ValueRange{dp, col});
      });
    });
  };
  scalarCopy(idx(0), rowsFull, 2 * pairsFull);
  scalarCopy(rowsFull, rows, 0);
}

/// S^T = K Q^T (* scale, unless the softmax applies it) with k pairs
/// broadcast against QP: computeScores' register block, half the
/// instructions.
void FlashKernelBuilder::computeScoresDot(Value k0, Value cols, bool biased) {
  Value scale =
      scaleInSoftmax ? Value() : vector::BroadcastOp::create(b, vecType(), f32(queryScale()));
  scoreBlocks(k0, cols, dim / 2, scale,
              [&](OpBuilder &nb, Location loc, Value dp, ArrayRef<Value> keyBases,
                  ArrayRef<Value> rowCols, ValueRange acc) {
                Value two = arith::ConstantIndexOp::create(nb, loc, 2);
                SmallVector<Value> qv, next;
                for (Value col : rowCols)
                  qv.push_back(vector::LoadOp::create(
                      nb, loc, pairVecType(), QP,
                      ValueRange{dp, arith::MulIOp::create(nb, loc, col, two)}));
                Value d = arith::MulIOp::create(nb, loc, dp, two);
                for (auto [r, base] : llvm::enumerate(keyBases)) {
                  Value kp = broadcastPair(nb, loc, kBuf,
                                           arith::AddIOp::create(nb, loc, base, d).getResult());
                  for (auto [c, q] : llvm::enumerate(qv))
                    next.push_back(x86vector::DotBF16Op::create(nb, loc, vecType(),
                                                                acc[r * qv.size() + c], q, kp));
                }
                return next;
              },
              /*fused=*/false, biased);
}

/// VP for the tile: rows 2jp and 2jp + 1 of v interleaved; keys past the
/// sequence are zero (their P is 0 too, and 0 * a non-finite v would not be).
void FlashKernelBuilder::packValuePairs(Value k0, Value cols) {
  int64_t w = cfg.vectorWidth, dimFull = dim / w * w;
  auto half = VectorType::get({w}, b.getBF16Type());
  Value zeroHalf =
      arith::ConstantOp::create(b, DenseElementsAttr::get(half, b.getZeroAttr(b.getBF16Type())));
  Value lastKey = arith::SubIOp::create(b, cols, idx(1));
  loop(0, blockKv / 2, 1, [&](Value jp) {
    SmallVector<Value> bases, valid;
    for (int64_t e = 0; e < 2; ++e) {
      Value j = add(mul(jp, idx(2)), idx(e));
      valid.push_back(lt(j, cols));
      bases.push_back(offset(vS, batch, kvHead, add(k0, minIdx(j, lastKey))));
    }
    for (int64_t d = 0; d < dimFull; d += w) {
      SmallVector<Value> halves;
      for (int64_t e = 0; e < 2; ++e) {
        Value x = vector::LoadOp::create(b, half, vBuf, ValueRange{add(bases[e], idx(d))});
        halves.push_back(arith::SelectOp::create(b, valid[e], x, zeroHalf));
      }
      vector::StoreOp::create(b, interleave(b, b.getLoc(), halves[0], halves[1]), VP,
                              ValueRange{jp, idx(2 * d)});
    }
    for (int64_t d = dimFull; d < dim; ++d)
      for (int64_t e = 0; e < 2; ++e) {
        Value x = memref::LoadOp::create(b, vBuf, ValueRange{add(bases[e], idx(d))});
        Value zero = arith::ConstantOp::create(b, b.getZeroAttr(b.getBF16Type()));
        memref::StoreOp::create(b, arith::SelectOp::create(b, valid[e], x, zero), VP,
                                ValueRange{jp, idx(2 * d + e)});
      }
  });
}

/// PB[(j - 1) / 2][2i..] = the P vectors of keys j - 1 and j (rows i.. of
/// the tile) rounded to bf16 and interleaved; called by the softmax as it
/// computes them (j odd).
void FlashKernelBuilder::storeProbabilityPair(OpBuilder &nb, Location loc, Value j, Value i,
                                              Value evenP, Value oddP) {
  auto half = VectorType::get({cfg.vectorWidth}, nb.getBF16Type());
  Value pair = interleave(nb, loc, arith::TruncFOp::create(nb, loc, half, evenP),
                          arith::TruncFOp::create(nb, loc, half, oddP));
  Value two = arith::ConstantIndexOp::create(nb, loc, 2);
  Value jp = arith::DivUIOp::create(nb, loc, j, two);
  vector::StoreOp::create(nb, loc, pair, PB,
                          ValueRange{jp, arith::MulIOp::create(nb, loc, i, two)});
}

/// acc = acc * ALPHA + P V over key pairs: accumulatePV's register block,
/// VP vectors against broadcast P pairs.
void FlashKernelBuilder::accumulatePVDot(Value cols) {
  int64_t w = cfg.vectorWidth;
  auto pairs = [&](Value lo, Value hi) {
    return std::pair<Value, Value>{arith::DivUIOp::create(b, lo, idx(2)),
                                   arith::CeilDivUIOp::create(b, minIdx(hi, cols), idx(2))};
  };
  valueBlocks(pairs,
              [&](OpBuilder &nb, Location loc, Value jp, ArrayRef<Value> rowIdx, int64_t d0,
                  int64_t vecBlock, ValueRange acc) {
                Value two = arith::ConstantIndexOp::create(nb, loc, 2);
                SmallVector<Value> v, next;
                for (int64_t c = 0; c < vecBlock; ++c)
                  v.push_back(vector::LoadOp::create(
                      nb, loc, pairVecType(), VP,
                      ValueRange{jp, arith::ConstantIndexOp::create(nb, loc, 2 * (d0 + c * w))}));
                for (auto [r, i] : llvm::enumerate(rowIdx)) {
                  Value col = arith::MulIOp::create(nb, loc, i, two);
                  Value p = broadcastPair(nb, loc, PB, ValueRange{jp, col});
                  for (int64_t c = 0; c < vecBlock; ++c)
                    next.push_back(x86vector::DotBF16Op::create(nb, loc, vecType(),
                                                                acc[r * vecBlock + c], v[c], p));
                }
                return next;
              });
}
