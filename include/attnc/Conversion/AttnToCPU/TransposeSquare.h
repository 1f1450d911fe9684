//===- TransposeSquare.h - in-register transpose of a square block -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOCPU_TRANSPOSESQUARE_H
#define ATTNC_CONVERSION_ATTNTOCPU_TRANSPOSESQUARE_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// Transposes a w x w block held as w vectors of w lanes (w a power of two):
/// rows[i][l] becomes rows[l][i]. log2(w) rounds of w two-source shuffles,
/// which x86 selects as single permutes (vpermt2ps / vunpck*); a scalar copy
/// or LLVM's scatter of the same transpose costs ~8x more per element.
void emitTransposeSquare(OpBuilder &b, Location loc, MutableArrayRef<Value> rows);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOCPU_TRANSPOSESQUARE_H
