//===- HalideHooks.h - attnc's replacements in Halide's runtime -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_HALIDEHOOKS_H
#define ATTNC_LIB_RUNTIME_HALIDEHOOKS_H

#include "HalideRuntime.h"

#include <cstdint>

namespace attnc::rt {

/// A tensor element type as Halide spells it.
halide_type_t halideElementType(int64_t dlpackCode, int64_t bytes);

/// The tensor argument of this thread's last failed checked load, or -1;
/// clears it.
int32_t takeHalideIndexFailure();

/// The user_context of a CUDA pipeline call: where Halide's CUDA runtime runs
/// it (HalideHooks.cpp's halide_cuda_acquire_context / get_stream read it).
struct HalideCudaCall {
  void *context; // CUcontext
  void *stream;  // CUstream; NULL: the default stream
};

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_HALIDEHOOKS_H
