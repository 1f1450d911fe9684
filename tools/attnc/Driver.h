//===- Driver.h - pieces of the attnc driver ---------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_DRIVER_H
#define ATTNC_TOOLS_ATTNC_DRIVER_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/Evaluator.h"
#include "attnc/Target/Compile.h"
#include "attnc/Target/Registry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace attnc {

struct ExplainOptions {
  /// Backend, target and schedule the kernels would be built with.
  const Selection &selection;
  int64_t batch = 1, seqQ = 0, seqKv = 0;
  std::string svgPath;
  std::string tuningNotes; // from --tuning-db, printed first
  ModInputs inputs;        // --input: what mask_mods read, for their tiles' verdicts
};

/// `attnc explain`: tile counts, FLOPs and the schedule of each kernel of a
/// normalized spec module; optionally the tile map as SVG.
llvm::Error explain(mlir::ModuleOp normalized, const ExplainOptions &options,
                    llvm::raw_ostream &os);

/// What the command line asks for; `tuningDb` empty when none.
struct BuildRequest {
  std::string backend, target, tuningDb;
  bool backendExplicit = false; // --backend given: the DB's pick is restricted to it
  llvm::ArrayRef<std::string> schedule;
};

/// The backend and --schedule assignments a spec is built with.
struct BuildChoice {
  std::string backend;
  std::vector<std::string> schedule;
  std::string notes;      // "tuning: ..." per kernel, for explain
  bool unmatched = false; // some kernel had no DB entry
};

/// As requested, or, with a tuning DB, each kernel's best entry
/// (TuningDb.h: chooseTuning) with explicit --schedule values applied over it.
llvm::Expected<BuildChoice> chooseBuild(mlir::ModuleOp module, const BuildRequest &request);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_DRIVER_H
