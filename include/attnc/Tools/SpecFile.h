//===- SpecFile.h - parse a spec file for attnc's tools ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Opens, parses and verifies a spec, with diagnostics printed against the
// source (file:line:col and the line itself). Shared by attnc and attnc-run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_SPECFILE_H
#define ATTNC_TOOLS_SPECFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

namespace attnc {

/// Null (after printing why) when the file is missing or the spec is invalid.
/// `sourceMgr` must outlive the diagnostics of later passes on the module.
inline mlir::OwningOpRef<mlir::ModuleOp>
parseSpecFile(llvm::StringRef path, mlir::MLIRContext &context,
              llvm::SourceMgr &sourceMgr, llvm::StringRef tool) {
  std::string message;
  auto file = mlir::openInputFile(path, &message);
  if (!file) {
    llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

} // namespace attnc

#endif // ATTNC_TOOLS_SPECFILE_H
