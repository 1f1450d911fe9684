//===- TransposeSquare.cpp - in-register transpose of a square block ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A transpose swaps the two off-diagonal halves of the matrix and transposes
// each quarter; unrolled, round s (s = w/2, ..., 1) swaps the off-diagonal
// s x s blocks of every 2s x 2s diagonal block. In one round, rows i and
// i + s (bit s of i clear) exchange the lanes whose bit s differs from the
// row's: two shuffles of the same pair of vectors.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cassert>

using namespace mlir;

void mlir::attn::emitTransposeSquare(OpBuilder &b, Location loc,
                                     MutableArrayRef<Value> rows) {
  int64_t w = rows.size();
  assert(w > 0 && (w & (w - 1)) == 0 && "block width must be a power of two");
  for (int64_t s = w / 2; s >= 1; s /= 2) {
    // Lane l of the new upper row: its own lane where bit s of l is clear,
    // else lane l - s of the lower row; the new lower row the converse.
    SmallVector<int64_t> upper(w), lower(w);
    for (int64_t l = 0; l < w; ++l) {
      upper[l] = (l & s) ? w + l - s : l;
      lower[l] = (l & s) ? w + l : l + s;
    }
    for (int64_t i = 0; i < w; ++i) {
      if (i & s)
        continue;
      Value a = rows[i], c = rows[i + s];
      rows[i] = vector::ShuffleOp::create(b, loc, a, c, upper);
      rows[i + s] = vector::ShuffleOp::create(b, loc, a, c, lower);
    }
  }
}
