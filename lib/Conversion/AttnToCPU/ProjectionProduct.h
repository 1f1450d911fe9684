//===- ProjectionProduct.h - register-blocked x W^T + b tiles -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The products of the projection kernels (attn.projection) and of the
// multi-head attention's projections: a tile of at most 256 rows x 64
// columns of y = A W^T + bias, accumulated in f32.
//
// A tile packs its 64 weight columns once (WT [K, 64], f32: nn.Linear's [out,
// in] weights are transposed w x w lanes at a time in registers, MatMul's
// [in, out] ones read as rows) and, for each 64 rows, 16-bit, those input
// rows (AF [64, K], f32; f32 rows are read in place), then runs register blocks of 6 rows x 2 or 4
// vectors over K (the rows left after whole blocks of 6 in one block of
// their own), as the attention kernels' P V products do. Up to kFewRows
// rows, nn.Linear weights are read in place instead (fewRows).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_PROJECTIONPRODUCT_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_PROJECTIONPRODUCT_H

#include "LoopBuilder.h"
#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Interface/KernelInterface.h"

namespace mlir::attn::cpu {

/// A product tile's columns (and the rows of its sub-tiles), and its rows.
constexpr int64_t kProductTile = attnc::kProjectionTile;
constexpr int64_t kProductRows = attnc::kProjectionRows;

/// One product tile: rows [m0, m0 + rows) of A (K wide) times columns
/// [col0, col0 + cols) of W^T, plus the bias, into `dest`.
struct ProductTile {
  Value aBuf, aBase, aStride;  // A's row m0 and its row stride
  int64_t k;                   // the reduction's length
  Value rows;                  // rows of the tile (<= kProjectionRows)
  Value wBuf, wStride, wCol0;  // W, its row stride, the tile's first column in W^T
  Value cols;                  // columns of the tile (<= 64)
  Value biasBuf, biasStride;   // an empty view: no bias
  Value dest, destBase, destStride; // where (row m0, column 0 of the tile) goes
};

class ProductBuilder : protected VectorLoopBuilder {
protected:
  /// `matmulWeights`: W is MatMul's [K, N] (y = A W), else nn.Linear's [N, K].
  ProductBuilder(ImplicitLocOpBuilder &b, const CpuKernelConfig &config, bool matmulWeights)
      : VectorLoopBuilder(b, config.vectorWidth), cfg(config), matmulWeights(matmulWeights),
        blockVectors(w >= 16 ? 4 : 2) {}

  /// dest's tile = the tile's rows of A times its columns of W^T, plus bias.
  void product(const ProductTile &t);

private:
  int64_t roundUp(int64_t n) const { return (n + w - 1) / w * w; }
  Value loadDynamicLanes(Value buf, Value at, Value valid);
  Value lanesOf(Value count, Value from) {
    return arith::MaxSIOp::create(b, idx(0), minIdx(idx(w), arith::SubIOp::create(b, count, from)));
  }
  void packRows(const ProductTile &t, Value AF, int64_t kPadded);
  void packColumns(const ProductTile &t, Value WT, int64_t kPadded);
  /// Rows per register block: a whole group, or the rows left after them.
  static constexpr int64_t kGroupRows = 6;
  void rowGroups(Value count, int64_t maxRows, function_ref<void(Value i0, int64_t rows)> emit);
  /// Vectors (or weight rows, in place) per block of `rows` rows: one or two
  /// rows take 4 (their weight loads, not the FMAs, bound them).
  int64_t colsFor(int64_t rows) const { return rows < 3 ? 4 : blockVectors; }
  void fewRows(const ProductTile &t, int64_t maxRows);
  void fewRowGroup(const ProductTile &t, Value g0, int64_t groupRows, int64_t groupCols);
  Value sumEach(ArrayRef<Value> vectors);
  /// `inPlaceRows`: 0 for a packed panel of weight columns, else the most
  /// rows of a tile whose MatMul weights are read in place.
  void blocks(const ProductTile &t, int64_t inPlaceRows);
  /// Vector c (w columns from column c * w) of the tile's W^T at row k.
  using WeightVecFn = function_ref<Value(Value k, int64_t c)>;
  void rowBlocks(const ProductTile &t, Value AF, WeightVecFn weightVec, ArrayRef<Value> bias,
                 int64_t fewRows);
  void storeLanes(Value x, Value dest, Value at, Value valid);

  CpuKernelConfig cfg;
  bool matmulWeights;
  int64_t blockVectors;
};

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_PROJECTIONPRODUCT_H
