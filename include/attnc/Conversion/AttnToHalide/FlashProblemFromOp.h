//===- FlashProblemFromOp.h - attn.flash as the Halide backend's input -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_ATTNTOHALIDE_FLASHPROBLEMFROMOP_H
#define ATTNC_CONVERSION_ATTNTOHALIDE_FLASHPROBLEMFROMOP_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Target/Halide/FlashPipeline.h"

namespace mlir::attn {

/// The plain-data problem of the kernel's attn.flash, for `target`; emits a
/// diagnostic on the op and fails for what the Halide backend does not
/// translate yet (another kernel family's op among them).
FailureOr<attnc::halide::FlashProblem> flashProblemFromOp(KernelOp kernel, StringRef target);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_ATTNTOHALIDE_FLASHPROBLEMFROMOP_H
