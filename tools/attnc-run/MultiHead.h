//===- MultiHead.h - attnc-run's multi-head attention kernels ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_MULTIHEAD_H
#define ATTNC_TOOLS_ATTNC_RUN_MULTIHEAD_H

#include "SeededRun.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// seq: x's length (self-attention: seqKv is not used).
struct MultiHeadRunOptions : SeededRunOptions {
  bool noBias = false;
  std::string keyLengths; // key_padding = lengths: "" (all seq), "random" or one per sequence
};

/// A multi-head attention kernel on seeded x, weights (uniform in [-1, 1)
/// over sqrt(fan-in)) and biases (none with noBias: NULL): the reference's
/// out written to `dir` with the inputs as .npy; with a kernel object, the
/// kernel timed (median and best, GFLOPS of the projections and the kept
/// pairs, % of the FMA peak) and its out compared with the reference's
/// (|got - ref| <= rtol (|ref| + max |ref|)).
llvm::Error runMultiHead(mlir::attn::MultiHeadAttentionOp op, const MultiHeadRunOptions &options);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_MULTIHEAD_H
