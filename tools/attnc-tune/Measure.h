//===- Measure.h - compiling, checking and timing a candidate ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A candidate is compiled by the attnc executable (a compiler failure costs
// a process, not the search), then checked and timed in a forked process:
// a candidate that crashes or hangs is a verdict, not the end of the search.
// The check runs it once on a small input against the reference (a wrong
// candidate is never timed); the timing alternates it with the default
// schedule's kernel round by round on the target problem, so that both see
// the same machine state, and its speedup is the median of the per-round
// ratios.
//
// Compilation never overlaps a measurement: the timing uses every core (by
// default), and on a 2-core machine a concurrent attnc compile made the dense
// head_dim 128 kernel 1.55x slower (median 36.2 -> 56.2 ms, docs/tuning.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_TUNE_MEASURE_H
#define ATTNC_TOOLS_ATTNC_TUNE_MEASURE_H

#include "Problem.h"

#include "attnc/Autotune/TuningDb.h"

namespace attnc::tune {

/// Builds candidates into `workDir`: in process through the library
/// (attnc/Target/Compile.h), or with the attnc executable `attnc` if set.
struct Compiler {
  std::string attnc, spec, faultySpec, target, workDir;
  /// The prefix whose lib/ holds the runtime the shared objects link.
  std::string installPrefix;

  /// The shared object of (backend, schedule), or the compiler's first
  /// error line. `faulty`: from the fault-injection spec (a test hook).
  llvm::Expected<std::string> compile(const std::string &backend, const std::string &schedule,
                                      bool faulty, unsigned serial) const;
};

/// Checks and times `candidateSo` against `defaultSo` in a child process
/// over `rounds` rounds; the returned candidate has status, detail and times
/// filled in.
TuningCandidate measure(const Problem &problem, const std::string &defaultSo,
                        const std::string &candidateSo, int rounds);

} // namespace attnc::tune

#endif // ATTNC_TOOLS_ATTNC_TUNE_MEASURE_H
