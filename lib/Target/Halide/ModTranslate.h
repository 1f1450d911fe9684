//===- ModTranslate.h - score_mod / mask_mod bodies as Halide Exprs -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_HALIDE_MODTRANSLATE_H
#define ATTNC_LIB_TARGET_HALIDE_MODTRANSLATE_H

#include "Halide.h"
#include "attnc/Target/Halide/FlashPipeline.h"

namespace attnc::halide {

/// The body's yielded value for these arguments (one per block argument, any
/// numeric type: each is cast to its argument's type). Throws
/// Halide::CompileError for an op it does not know.
Halide::Expr translateMod(const ModBody &body, const std::vector<Halide::Expr> &args);

} // namespace attnc::halide

#endif // ATTNC_LIB_TARGET_HALIDE_MODTRANSLATE_H
