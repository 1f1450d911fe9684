//===- HalideHooks.cpp - attnc's replacements in Halide's runtime ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Halide's runtime, linked into every Halide kernel object with weak symbols,
// lets an application replace some of its functions by defining them. attnc
// replaces:
//   - halide_error, whose default aborts the process: this one prints the
//     message and returns; the pipeline then returns the error code, which
//     the launch reports as ATTNC_ERR_KERNEL, as for an MLIR kernel whose mod
//     divided by zero;
//   - the CUDA context and stream: the ones attnc_rt_halide_grid chose (the
//     tensors' device's primary context, the caller's stream), from the
//     user_context, instead of a context of Halide's own.
// Both adapters call halideElementType, which brings this file into every
// kernel that links a Halide pipeline.
//
//===----------------------------------------------------------------------===//

#include "HalideHooks.h"
#include "attnc/Runtime/attnc_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace attnc::rt;

halide_type_t attnc::rt::halideElementType(int64_t dlpackCode, int64_t bytes) {
  // DLPack's and Halide's float / bfloat codes agree (2, 4).
  return halide_type_t(static_cast<halide_type_code_t>(dlpackCode), uint8_t(bytes * 8));
}

namespace {
/// The tensor argument of this thread's last index failure, or -1.
thread_local int32_t lastIndexFailure = -1;
} // namespace

int32_t attnc::rt::takeHalideIndexFailure() {
  int32_t arg = lastIndexFailure;
  lastIndexFailure = -1;
  return arg;
}

/// An index failure (ATTNC_HALIDE_INDEX_FAILURE: a Halide pipeline's checked
/// load) is recorded, not printed: the launch's own error names the tensor.
extern "C" void halide_error(void *, const char *message) {
  if (const char *at = std::strstr(message, ATTNC_HALIDE_INDEX_FAILURE)) {
    const char *arg = at + std::strlen(ATTNC_HALIDE_INDEX_FAILURE);
    lastIndexFailure = int32_t(std::strtol(arg, nullptr, 10));
    return;
  }
  std::fprintf(stderr, "attnc: Halide pipeline: %s", message);
}

extern "C" int halide_cuda_acquire_context(void *userContext, void **context, bool) {
  if (!userContext)
    return halide_error_code_device_interface_no_device;
  *context = static_cast<HalideCudaCall *>(userContext)->context;
  return 0;
}

extern "C" int halide_cuda_release_context(void *) { return 0; }

extern "C" int halide_cuda_get_stream(void *userContext, void *, void **stream) {
  *stream = userContext ? static_cast<HalideCudaCall *>(userContext)->stream : nullptr;
  return 0;
}
