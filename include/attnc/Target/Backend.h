//===- Backend.h - a code generator of attnc ---------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One class per code generator: the MLIR CPU kernels, the MLIR CUDA kernels
// and Halide's. Each writes the stages it has and assembles its objects;
// compileSpec (Compile.h) picks the one of a selection. Nothing outside
// lib/Target asks which backend or target a selection is.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_BACKEND_H
#define ATTNC_TARGET_BACKEND_H

#include "attnc/Target/Compile.h"

namespace attnc {

class Backend {
public:
  virtual ~Backend() = default;
  /// Writes `stage` (not `spec`, which compileSpec prints itself) of
  /// `module`, or says which stages this backend has.
  virtual llvm::Error emit(mlir::ModuleOp module, const Selection &selection, EmitStage stage,
                           const CompileOutput &output) const = 0;
  /// Whether its kernels classify tiles by a mask_mod's interval analysis
  /// (skipping those it keeps nothing of); otherwise they visit every tile
  /// the mask attribute keeps and apply the mask_mod per element.
  virtual bool classifiesMaskModTiles() const { return false; }
};

/// The backend that compiles `selection`.
const Backend &backendFor(const Selection &selection);

} // namespace attnc

#endif // ATTNC_TARGET_BACKEND_H
