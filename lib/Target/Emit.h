//===- Emit.h - what the backends share to write their stages ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Target: text and object files, object parts merged with the
// system linker's -r, the shared object linked with the runtime, the header.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_EMIT_H
#define ATTNC_LIB_TARGET_EMIT_H

#include "attnc/Target/Compile.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace attnc::emit {

llvm::Error error(const llvm::Twine &message);

/// A failure whose diagnostic has been printed already (an empty message).
llvm::Error alreadyReported();

/// Writes `path` ("-": stdout) with `fn`.
llvm::Error writeText(llvm::StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> fn);

/// Prints `module` as it is (`stage` spec) or after the MLIR pipeline up to
/// `stage` (normalized, tiled or loops) to `output.path`.
llvm::Error printMlirStage(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                           const CompileOutput &output);

/// `output.produce`, or `write` itself when the driver gave none.
llvm::Error produce(const CompileOutput &output, llvm::function_ref<llvm::Error()> write);

/// Objects in temporary files, merged into one and removed at the end.
class ObjectParts {
public:
  ~ObjectParts();
  /// A new temporary object path, removed at the end and on SIGINT / SIGTERM.
  llvm::Expected<std::string> add();
  /// An existing object to merge too, kept afterwards.
  void addKept(llvm::StringRef path) { kept.push_back(path.str()); }
  /// Merges the parts, objects for `triple`, into one relocatable object (the
  /// linker's -r).
  llvm::Error merge(llvm::StringRef output, llvm::StringRef triple) const;

private:
  std::vector<std::string> parts, kept;
};

/// Writes the object (`stage` obj, with the header next to it) or the shared
/// object (`so`: the object linked with the runtime) at `output.path`;
/// `writeObject` writes the object to the path it is given. `spec` is a copy
/// of the spec the pipeline did not touch; the header describes it as
/// `selection`'s pipeline normalizes it (a linear attention's chunk).
llvm::Error writeOutputs(llvm::function_ref<llvm::Error(llvm::StringRef)> writeObject,
                         mlir::ModuleOp spec, const Selection &selection, EmitStage stage,
                         const CompileOutput &output);

/// The name a definition `name` takes in the variant `suffix` of a
/// multi-target object (`name` itself without one).
std::string variantName(llvm::StringRef name, llvm::StringRef suffix);

/// Emits the LLVM-dialect `module` as an object at `path`; with `suffix`, as
/// one variant of a multi-target object (MultiTarget.cpp).
llvm::Error writeObjectFile(mlir::ModuleOp module, const CpuTarget &target, llvm::StringRef path,
                            llvm::StringRef suffix = "");

/// Runs the pipeline on `module` and writes its object at `path`, kernel by
/// kernel on `jobs` threads (0: one per core), kernels with the same tile
/// code sharing one; with `suffix`, as one variant of a multi-target object.
llvm::Error writeKernelwiseObject(mlir::ModuleOp module, const Selection &selection,
                                  unsigned jobs, llvm::StringRef path,
                                  llvm::StringRef suffix = "");

} // namespace attnc::emit

#endif // ATTNC_LIB_TARGET_EMIT_H
