//===- Linear.h - attnc-run's linear attention kernels ----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_LINEAR_H
#define ATTNC_TOOLS_ATTNC_RUN_LINEAR_H

#include "SeededRun.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// seq: q's length (a causal kernel's one length), seqKv: k's and v's.
struct LinearRunOptions : SeededRunOptions {
  /// state = carry: also run the sequence as a prefill of seq - steps rows
  /// and `steps` calls of one row, each from the previous call's state.
  int64_t steps = 0;
};

/// A linear attention kernel on seeded q, k, v (and with state = carry a
/// seeded initial state): the reference's out and final state written to
/// `dir` as .npy; with a kernel object, the kernel timed (median and best
/// of `repeat` runs, GFLOPS, % of the FMA peak) and its out and final state
/// compared with the reference's (|got - ref| <= rtol (|ref| + max |ref|)).
llvm::Error runLinear(mlir::attn::LinearAttentionOp op, const LinearRunOptions &options);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_LINEAR_H
