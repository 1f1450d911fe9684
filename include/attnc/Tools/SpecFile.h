//===- SpecFile.h - parse a spec file for attnc's tools ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Opens, parses and verifies a spec, with diagnostics printed against the
// source. Shared by attnc and attnc-run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_SPECFILE_H
#define ATTNC_TOOLS_SPECFILE_H

#include "attnc/InitAll.h"
#include "attnc/Tools/NestingLimit.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

namespace attnc {

/// "file:line:col" of a location in a spec (MLIR's own form for any other), for tools that
/// report an error about an op as an llvm::Error rather than a diagnostic.
inline std::string locationText(mlir::Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ':' << file.getLine() << ':' << file.getColumn();
  else
    os << loc;
  return text;
}

/// A spec as attnc's tools read it: a context with attnc's dialects, the
/// source manager that diagnostics print against (file:line:col and the line
/// itself), and the parsed, verified module. The diagnostics of passes run
/// later on the module print against the same source, so they live together.
class SpecFile {
public:
  /// Diagnostics print to `os`. `threading` off: a context that starts no
  /// thread pool (one context per compile thread, or a process that forks).
  explicit SpecFile(llvm::raw_ostream &os = llvm::errs(), bool threading = true)
      : context(dialects(), threading ? mlir::MLIRContext::Threading::ENABLED
                                      : mlir::MLIRContext::Threading::DISABLED),
        diagnostics(sourceMgr, &context, os) {
    // A user's mistake is reported at its line in the spec; the op's generic
    // form ("see current operation") is for compiler developers (attnc-opt).
    context.printOpOnDiagnostic(false);
  }

  /// Null (after printing why) when the file is missing or the spec invalid.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef path,
                                          llvm::StringRef tool) {
    std::string message;
    auto file = mlir::openInputFile(path, &message);
    if (!file) {
      llvm::WithColor::error(llvm::errs(), tool) << message << "\n";
      return nullptr;
    }
    llvm::StringRef text = file->getBuffer();
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    size_t excess = findExcessNesting(text);
    if (excess != llvm::StringRef::npos) {
      sourceMgr.PrintMessage(
          llvm::SMLoc::getFromPointer(sourceMgr.getMemoryBuffer(id)->getBufferStart() + excess),
          llvm::SourceMgr::DK_Error,
          "the spec nests brackets deeper than " + llvm::Twine(kMaxSpecNesting) +
              " levels here (masks composed with #attn.and / #attn.or take two per level); "
              "attnc refuses it before parsing, whose recursion would overflow the stack");
      return nullptr;
    }
    return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }

  /// A spec from its text (a printed module whose locations name its file,
  /// which diagnostics then print against); null after printing why.
  mlir::OwningOpRef<mlir::ModuleOp> parseString(llvm::StringRef text) {
    return mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }

private:
  static mlir::DialectRegistry dialects() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;
};

} // namespace attnc

#endif // ATTNC_TOOLS_SPECFILE_H
