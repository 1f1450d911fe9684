//===- Report.h - attnc-tune's progress line and final report ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_TUNE_REPORT_H
#define ATTNC_TOOLS_ATTNC_TUNE_REPORT_H

#include "Space.h"

#include "attnc/Autotune/TuningDb.h"
#include "llvm/ADT/StringMap.h"

namespace attnc::tune {

/// Counts of one search, for the report.
struct SearchCounts {
  unsigned tried = 0, fromDb = 0;
  unsigned sameObject = 0; // compiled to a kernel already measured: not re-timed
  llvm::StringMap<unsigned> pruned; // reason ("registers", "cache") -> count
  double seconds = 0;
  std::string search; // exhaustive or guided, and the space size
};

/// What reproduces the best schedule: the attnc command line.
std::string reproduceCommand(const TuningEntry &entry, llvm::StringRef spec,
                             llvm::StringRef db);

/// The summary printed at the end and at the top of report.md.
void printSummary(const TuningEntry &entry, const SearchCounts &counts, llvm::StringRef spec,
                  llvm::StringRef db, llvm::raw_ostream &os);

/// report.md (summary and every candidate, fastest first) and candidates.svg
/// (speedup over the default against each tunable) in `dir`.
llvm::Error writeReport(const TuningEntry &entry, const SearchCounts &counts,
                        const SearchSpace &space, llvm::StringRef spec, llvm::StringRef db,
                        llvm::StringRef dir);

} // namespace attnc::tune

#endif // ATTNC_TOOLS_ATTNC_TUNE_REPORT_H
