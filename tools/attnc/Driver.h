//===- Driver.h - pieces of the attnc driver ---------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_DRIVER_H
#define ATTNC_TOOLS_ATTNC_DRIVER_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/Registry.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace attnc {

/// Writes the C header declaring every kernel of a normalized spec module.
void writeHeader(mlir::ModuleOp normalized, llvm::StringRef specPath,
                 llvm::raw_ostream &os);

struct ExplainOptions {
  /// Backend, target and schedule the kernels would be built with.
  const Selection &selection;
  int64_t batch = 1, seqQ = 0, seqKv = 0;
  std::string svgPath;
  std::string tuningNotes; // from --tuning-db, printed first
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

/// Multi-target objects (MultiTarget.cpp): renames `module`'s externally
/// visible definitions to `<name>.<target>`.
void suffixDefinitions(llvm::Module &module, llvm::StringRef target);
/// The object exporting each kernel's entry point, dispatching over the
/// suffixed variants of `targets` (best first).
llvm::Error writeDispatcher(llvm::ArrayRef<std::string> kernels,
                            llvm::ArrayRef<CpuTarget> targets, llvm::StringRef path);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_DRIVER_H
