//===- SeededRun.h - attnc-run's runs of kernel families on seeded inputs -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_SEEDEDRUN_H
#define ATTNC_TOOLS_ATTNC_RUN_SEEDEDRUN_H

#include "attnc/Reference/HostTensor.h"
#include "attnc/Reference/KernelCall.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace attnc {

/// What a run of a family beside attention (linear, multi-head) takes: the
/// problem's sizes and seed, and with a kernel object its timing and check.
struct SeededRunOptions {
  int64_t batch = 1, seq = 1, seqKv = 1;
  uint64_t seed = 0;
  std::string soPath, dir; // no soPath: the reference alone
  int threads = 0, repeat = 5;
  bool measurePeak = true, noReference = false;
  double rtol = -1; // < 0: relativeTolerance's
};

/// --rtol, or the family's default (attnc::relativeTolerance(type)).
double relativeTolerance(const SeededRunOptions &o, ElementType type);

/// "compiled <family> kernel @name (so), N threads: median, best" and the
/// GFLOPS line (`count` says what the FLOPs count), with the FMA peak
/// measured now when asked; `seconds` sorted.
void printSpeed(const SeededRunOptions &o, llvm::StringRef family, llvm::StringRef name,
                const std::vector<double> &seconds, double flops, llvm::StringRef count);

/// Uniform in [-1, 1) over sqrt(fanIn), nn.Linear's initialisation's
/// scale, rounded to `type`: seeded weights and biases.
HostTensor linearWeight(ElementType type, llvm::ArrayRef<int64_t> shape, int64_t fanIn,
                        uint64_t seed);

/// Seconds of each of `o.repeat` timed calls of `kernel` on `args` after a
/// warm-up one, sorted; an error with attnc_last_error's text when a call
/// fails.
llvm::Expected<std::vector<double>> timeCalls(const LoadedKernel &kernel,
                                              std::vector<const DLTensor *> &args,
                                              const SeededRunOptions &o);


/// `tensors` written to `dir` (created) as <name>.npy in their own element
/// types, each named on stdout; empty ones are left out.
llvm::Error writeTensors(llvm::StringRef dir,
                         llvm::ArrayRef<std::pair<const char *, const HostTensor *>> tensors);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_SEEDEDRUN_H
