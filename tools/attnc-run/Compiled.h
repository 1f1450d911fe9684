//===- Compiled.h - running a compiled kernel in attnc-run ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_COMPILED_H
#define ATTNC_TOOLS_ATTNC_RUN_COMPILED_H

#include "attnc/Reference/Evaluator.h"
#include "llvm/Support/Error.h"

namespace attnc {

struct CompiledOptions {
  std::string soPath;
  int threads = 0;  // 0: all cores
  int repeat = 5;
  bool measurePeak = true;
};

/// How far a kernel output may be from the reference's, per element:
/// |got - ref| <= atol + rtol |ref|.
struct Tolerance {
  double rtol, atol;
};

/// The tolerance of a kernel of element type `type` against the reference:
/// the numeric matrix's (test/numerics/matrix.json, "tolerances"). f32
/// kernels differ from the double reference by f32 accumulation over tiles
/// and a polynomial exp; f16 / bf16 kernels also round q, k, v and out.
Tolerance defaultTolerance(ElementType type);

struct CompiledOutputs {
  HostTensor out, lse;
};

/// Loads the kernel of `op` from a shared object built with `attnc
/// --emit=so`, runs it `repeat` times on q/k/v and prints timing, GFLOPS over
/// `usefulPairs` (b, h, q, kv) pairs, % of the FMA peak and peak memory.
/// Returns the outputs of the last run.
llvm::Expected<CompiledOutputs> runCompiled(mlir::attn::AttentionOp op,
                                            const HostTensor &q,
                                            const HostTensor &k,
                                            const HostTensor &v,
                                            double usefulPairs,
                                            const CompiledOptions &options);

/// Compares a kernel output with the reference: |got - ref| <= atol + rtol
/// |ref| per element, -inf where the reference has -inf. Prints the largest
/// errors; returns false on a mismatch.
bool compareOutputs(llvm::StringRef name, const HostTensor &got,
                    const HostTensor &ref, double rtol, double atol);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_COMPILED_H
