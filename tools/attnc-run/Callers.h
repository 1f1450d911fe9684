//===- Callers.h - attnc-run's concurrent callers and host loop -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_CALLERS_H
#define ATTNC_TOOLS_ATTNC_RUN_CALLERS_H

#include "attnc/Reference/KernelCall.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// --host-parallel-for: gives the kernel's runtime a parallel-for of
/// attnc-run's own (attnc_set_parallel_for), as a host with a thread pool
/// would, so that every multi-threaded launch runs its helpers through it.
llvm::Error useHostParallelFor(const LoadedKernel &kernel);

/// --callers: `callers` threads call the kernel at once, each on its own
/// tensors, `rounds` times; prints the median wall time of those rounds
/// against the same calls made one after another, and fails unless every
/// caller's out and lse are bit-identical to the first serial call's.
llvm::Error runConcurrentCallers(mlir::attn::AttentionSpecOpInterface op,
                                 const LoadedKernel &kernel, const HostTensor &q,
                                 const HostTensor &k, const HostTensor &v, int threads,
                                 int callers, int rounds);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_CALLERS_H
