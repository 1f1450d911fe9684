//===- Compile.h - compiling a spec to any stage, as a library --*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What `attnc SPEC --emit=STAGE -o PATH` does, for any program: the backend
// of the selection (Backend.h) writes the stage. The driver keeps only its
// command line, its output names and its kernel cache (CompileOutput::produce).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_COMPILE_H
#define ATTNC_TARGET_COMPILE_H

#include "attnc/Target/Registry.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace attnc {

/// The stages `attnc --emit` writes.
enum class EmitStage { spec, normalized, tiled, loops, halide, ptx, llvm, assembly, obj, so };

/// Where and how a compile writes its output.
struct CompileOutput {
  /// The stage's file; "-" is stdout (text stages). An object's header goes
  /// next to it (NAME.h).
  std::string path;
  /// The prefix attnc runs from: <prefix>/lib holds the runtime that `so`
  /// links and the Halide runtime objects.
  std::string installPrefix;
  /// The spec's path, as the header names it.
  std::string specFile;
  /// Threads compiling the kernels of a spec (0: one per core).
  unsigned jobs = 0;
  /// Writes the obj, so or ptx file at `path` by calling `write`, or from a
  /// cache of earlier results (attnc's kernel cache); unset: calls `write`.
  std::function<llvm::Error(llvm::StringRef path, llvm::function_ref<llvm::Error()> write)>
      produce;
  /// Told of a file the output depends on beyond the spec and the options
  /// (the Halide runtime object merged in), for such a cache's key.
  std::function<void(llvm::StringRef what, llvm::StringRef path)> noteInput;
};

/// Writes `stage` of the verified spec `module` for `selection`. An error
/// with an empty message means the diagnostics said it already.
llvm::Error compileSpec(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                        const CompileOutput &output);

/// One object (obj or so) holding a variant of every kernel per selection
/// (x86-64 CPU targets of the mlir backend, best first) and entry points that
/// pick the variant for the running CPU.
llvm::Error compileMultiTarget(mlir::ModuleOp module, llvm::ArrayRef<Selection> variants,
                               EmitStage stage, const CompileOutput &output);

/// Runs the (backend, target) pipeline up to `until` in process, with MLIR's
/// pass manager options (--mlir-print-ir-after-all, --mlir-timing, ...).
llvm::Error runPipeline(mlir::ModuleOp module, const Selection &selection, PipelineStage until,
                        std::optional<PipelineStage> from = std::nullopt);

/// Writes the C header declaring every kernel of a normalized spec module.
void writeHeader(mlir::ModuleOp normalized, llvm::StringRef specPath, llvm::raw_ostream &os);

/// `attnc --list-targets`' line on the Halide runtime objects under
/// `installPrefix`: where they are, or that each Halide kernel carries its own.
void printHalideRuntimes(llvm::StringRef installPrefix, llvm::raw_ostream &os);

/// Writes each Halide target's runtime object into `dir` (the build's step).
llvm::Error writeHalideRuntimes(llvm::StringRef dir);

} // namespace attnc

#endif // ATTNC_TARGET_COMPILE_H
