//===- Problem.h - what attnc-tune checks and times candidates on -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A problem is two sets of seeded tensors of the tuned kernel's family: a
// small one, checked against the reference's outputs for it, and the target
// problem, timed. An attention kernel's are its q, k, v, out (and lse); a
// linear attention kernel's add the carried state where it has one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_TUNE_PROBLEM_H
#define ATTNC_TOOLS_ATTNC_TUNE_PROBLEM_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/KernelCall.h"

#include <memory>

namespace attnc::tune {

/// The tensors of one call of the tuned kernel, and the reference's outputs
/// for them where they are checked.
class ProblemTensors {
public:
  virtual ~ProblemTensors() = default;
  /// Calls the kernel once; the error carries attnc_last_error's text.
  virtual llvm::Error call(const LoadedKernel &kernel, int threads) = 0;
  /// "" when the last call's outputs match the reference, else the first
  /// output off and by how much.
  virtual std::string offReference() const = 0;
};

/// What every candidate is checked and timed on.
struct Problem {
  std::string kernel;
  std::unique_ptr<ProblemTensors> check, timing;
  int threads = 0;
  double timeoutSeconds = 120;
};

/// The sizes of the timed problem, and of the check's: at most `checkSeq`
/// queries, the difference of the lengths kept (masks aligned bottom-right
/// depend on it).
struct ProblemSizes {
  int64_t batch, seqQ, seqKv, checkSeq;
  uint64_t seed;
};

/// `kernel`'s problem: an attention spec's or a linear attention's.
llvm::Expected<std::unique_ptr<Problem>> makeProblem(mlir::attn::KernelOp kernel,
                                                     const ProblemSizes &sizes);

} // namespace attnc::tune

#endif // ATTNC_TOOLS_ATTNC_TUNE_PROBLEM_H
