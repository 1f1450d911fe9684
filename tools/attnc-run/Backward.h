//===- Backward.h - attnc-run's gradients -----------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H
#define ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H

#include "attnc/Reference/Evaluator.h"

namespace attnc {

/// Where a backward call's loss gradients come from: d_out from `dOut`
/// (.npy in the dtype, out's shape) or, if it is empty, seeded; lse's from
/// `dLse` (.npy, f32 [batch, heads, seq_q]) or seeded ("seeded"), or none
/// (empty).
struct LossGradients {
  std::string dOut, dLse;
};

/// The reference gradients of `op`'s out on q, k, v (evaluateBackward) for
/// the loss gradients `loss` (seeded from `seed`); printed as a summary and
/// written to `dir` as d_out, (d_lse,) dq, dk and dv .npy (f32).
llvm::Error runBackward(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                        const HostTensor &k, const HostTensor &v, const ModInputs &mods,
                        const LossGradients &loss, uint64_t seed, llvm::StringRef dir);

struct CompiledBackwardOptions {
  std::string soPath, dir;
  LossGradients loss;
  uint64_t seed = 0;
  int threads = 0, repeat = 5;
  bool measurePeak = true;
  double rtol = -1; // < 0: the dtype's (f32 1e-4, f16 4e-3, bf16 2e-2)
  /// No reference (timing only): out is random and lse log(seq_kv), so P is
  /// about 1 / seq_kv; GFLOPS count `keptPairs` pairs.
  bool noReference = false;
  double keptPairs = 0;
};

/// A backward kernel (outputs = [dq, dk, dv]) of `op` called through its
/// descriptor with the reference's forward out and lse (and the mods'
/// inputs `mods` after the gradients): timed (median and
/// best of `repeat` runs, GFLOPS at 2.5 times the forward's FLOPs), its
/// gradients compared with the reference's (|got - ref| <= rtol (|ref| +
/// max |ref|) per tensor) and written to `dir` as d_out, dq, dk and dv .npy
/// (f32).
llvm::Error runCompiledBackward(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                                const HostTensor &k, const HostTensor &v, const ModInputs &mods,
                                const CompiledBackwardOptions &options);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_BACKWARD_H
