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
};

/// `attnc explain`: tile counts, FLOPs and the schedule of each kernel of a
/// normalized spec module; optionally the tile map as SVG.
llvm::Error explain(mlir::ModuleOp normalized, const ExplainOptions &options,
                    llvm::raw_ostream &os);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_DRIVER_H
