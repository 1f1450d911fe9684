//===- IRDigest.h - a digest of IR that any context computes alike -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_IRDIGEST_H
#define ATTNC_LIB_TARGET_IRDIGEST_H

#include "mlir/IR/Operation.h"

#include <string>

namespace attnc {

/// A SHA-1 (hex) of `op` and everything nested in it: op names, properties
/// and attributes and types (by their printed form), which value each operand
/// is and which block each successor is (by position), the regions' blocks.
/// Locations are left out. Two ops get the same digest when they are the same
/// IR, in one MLIRContext or in two (what attnc's kernel-compiling threads,
/// one context each, compare), and different digests otherwise (up to SHA-1
/// collisions). "" when an operand is defined outside `op`: no digest says
/// which value that is.
///
/// It is the printed form's digest without the printer's cost (the printer
/// verifies the op, then prints every attribute and type twice, once to find
/// aliases; this prints each distinct one once).
std::string irDigest(mlir::Operation *op);

} // namespace attnc

#endif // ATTNC_LIB_TARGET_IRDIGEST_H
