//===- CudaLaunch.cpp - attnc_rt_cuda_launch ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The grid functions of the MLIR CUDA backend (attn-lower-flash-to-nvgpu)
// forward here with the kernel's cubin, its launch facts and the runtime's
// checked flat views. The kernel takes each view as the MLIR memref
// descriptor it is (5 parameters), then the params array's 17 values; one
// CTA per (query tile, head, batch).
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CudaDriver.h"
#include "Describe.h"
#include "HalideGrid.h"

#include <climits>
#include <cstdint>

using namespace attnc::rt;

namespace {

/// Why the kernel cannot take these views ("" if it can): cp.async copies
/// 16-byte pieces of rows, so q, k, v rows must start 16-byte aligned, and
/// out is written in element pairs.
std::string misalignment(attnc_memref *const views[4], const int64_t *p, int64_t elemBytes) {
  static const char *names[] = {"q", "k", "v", "out"};
  const int64_t firstStride[] = {ATTNC_P_Q_STRIDES, ATTNC_P_K_STRIDES, ATTNC_P_V_STRIDES,
                                 ATTNC_P_OUT_STRIDES};
  for (int n = 0; n < 4; ++n) {
    int64_t align = n < 3 ? 16 : 2 * elemBytes;
    auto address = reinterpret_cast<uintptr_t>(views[n]->aligned) +
                   uintptr_t(views[n]->offset * elemBytes);
    bool ok = address % align == 0;
    for (int s = 0; s < 3; ++s)
      ok = ok && (p[firstStride[n] + s] * elemBytes) % align == 0;
    if (!ok)
      return cat("the cuda-sm80 kernel needs ", names[n], " data and its batch, head and seq "
                 "strides aligned to ", align, " bytes (head_dim contiguous; e.g. strides "
                 "multiples of ", align / elemBytes, " elements)");
  }
  return "";
}

} // namespace

extern "C" int32_t attnc_rt_cuda_launch(const void *image, const char *function,
                                        attnc_memref *q, attnc_memref *k, attnc_memref *v,
                                        attnc_memref *out, attnc_memref *lse,
                                        attnc_memref_i64 *params, int64_t batch,
                                        int64_t deviceId, void *stream, int64_t heads,
                                        int64_t blockQ, int64_t threads,
                                        int64_t sharedBytes) {
  int64_t *p = params->aligned + params->offset;
  attnc_memref *views[] = {q, k, v, out, lse};
  if (std::string why = misalignment(views, p, 2); !why.empty()) {
    setGridFailureDetail(why);
    return kGridNoDevice;
  }
  int64_t tiles = (p[ATTNC_P_SEQ_Q] + blockQ - 1) / blockQ;
  if (tiles > INT32_MAX || heads > 65535 || batch > 65535) {
    setGridFailureDetail(cat("a grid of ", tiles, " x ", heads, " x ", batch,
                             " CTAs (query tiles x heads x batch) is beyond CUDA's limits "
                             "(2^31 - 1 x 65535 x 65535)"));
    return kGridNoDevice;
  }
  void *args[5 * 5 + ATTNC_P_COUNT];
  int n = 0;
  for (attnc_memref *m : views)
    for (void *field : {static_cast<void *>(&m->allocated), static_cast<void *>(&m->aligned),
                        static_cast<void *>(&m->offset), static_cast<void *>(&m->size),
                        static_cast<void *>(&m->stride)})
      args[n++] = field;
  for (int i = 0; i < ATTNC_P_COUNT; ++i)
    args[n++] = &p[i];
  const unsigned grid[3] = {unsigned(tiles), unsigned(heads), unsigned(batch)};
  std::string error;
  bool ran = false;
  if (cudaLaunch(deviceId, image, function, grid, unsigned(threads), unsigned(sharedBytes),
                 stream, args, error, ran))
    return 0;
  setGridFailureDetail(error);
  return ran ? kGridLaunchFailed : kGridNoDevice;
}
