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

#include <functional>

namespace attnc::halide {

/// What an attn.load reads: its input's name, its indices (i64) and its
/// result type.
using ModLoadFn = std::function<Halide::Expr(const std::string &input,
                                             const std::vector<Halide::Expr> &indices,
                                             Halide::Type type)>;

/// The body's yielded value for these arguments (one per block argument, any
/// numeric type: each is cast to its argument's type), its loads through
/// `load`. Throws Halide::CompileError for an op it does not know, or a load
/// without `load`.
Halide::Expr translateMod(const ModBody &body, const std::vector<Halide::Expr> &args,
                          const ModLoadFn &load = nullptr);

} // namespace attnc::halide

#endif // ATTNC_LIB_TARGET_HALIDE_MODTRANSLATE_H
