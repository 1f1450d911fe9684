//===- Backward.h - attnc-run --reference --backward ------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H
#define ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H

#include "attnc/Reference/Evaluator.h"

namespace attnc {

/// The reference gradients of `op`'s out on q, k, v (evaluateBackward) for
/// d_out from `dOutFile` (.npy in the dtype, out's shape) or, if it is empty,
/// seeded from `seed`; printed as a summary and written to `dir` as d_out,
/// dq, dk and dv .npy (f32).
llvm::Error runBackward(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                        const HostTensor &k, const HostTensor &v, const ModInputs &mods,
                        llvm::StringRef dOutFile, uint64_t seed, llvm::StringRef dir);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H
