//===- Compiled.h - running a compiled kernel in attnc-run ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_COMPILED_H
#define ATTNC_TOOLS_ATTNC_RUN_COMPILED_H

#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/KernelCall.h"
#include "llvm/Support/Error.h"

namespace attnc {

struct KvCache;
struct Varlen;

struct CompiledOptions {
  std::string soPath;
  int threads = 0;  // 0: all cores
  int repeat = 5;
  bool measurePeak = true;
  int callers = 1;             // > 1: also call from this many threads at once
  bool hostParallelFor = false; // helpers through attnc_set_parallel_for
  bool coldCache = false;       // evict the caches before each run
  const KvCache *kvCache = nullptr; // a kv_cache kernel's lengths (and pages)
  const Varlen *varlen = nullptr;   // a varlen kernel's sequence lengths
  const ModInputs *inputs = nullptr; // the tensors the mods read
};

struct CompiledOutputs {
  HostTensor out, lse, weights; // weights: when the spec outputs them
};

/// Loads the kernel of `op` from a shared object built with `attnc
/// --emit=so`, runs it `repeat` times on q/k/v and prints timing, GFLOPS over
/// `usefulPairs` (b, h, q, kv) pairs, % of the FMA peak and peak memory.
/// Returns the outputs of the last run.
llvm::Expected<CompiledOutputs> runCompiled(mlir::attn::AttentionSpecOpInterface op,
                                            const HostTensor &q,
                                            const HostTensor &k,
                                            const HostTensor &v,
                                            double usefulPairs,
                                            const CompiledOptions &options);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_COMPILED_H
