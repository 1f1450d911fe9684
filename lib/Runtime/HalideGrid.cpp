//===- HalideGrid.cpp - attnc_rt_halide_grid ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The grid function of a Halide GPU kernel forwards here with the runtime's
// flat views and params: they become 4-d halide_buffer_t views (d, seq, head,
// batch) of the whole tensors, and the pipeline runs once.
//   - CUDA: the views wrap the tensors' device pointers (no copies), and the
//     pipeline runs in the device's primary context on the caller's stream,
//     both handed to Halide's CUDA runtime through the user_context
//     (HalideHooks.cpp).
//   - OpenCL (the check target): the tensors are host memory; Halide copies
//     the inputs to the device, and this adapter copies the outputs back and
//     frees the device copies.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CudaDriver.h"
#include "Describe.h"
#include "HalideGrid.h"
#include "HalideHooks.h"

#include "HalideRuntime.h"

#include <climits>
#include <cstdio>

using namespace attnc::rt;

namespace {

thread_local char tlsDetail[512] = "";

using PipelineOut = int (*)(void *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                            halide_buffer_t *);
using PipelineOutLse = int (*)(void *, halide_buffer_t *, halide_buffer_t *,
                               halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);

/// A 4-d view, dims innermost first as (extent, stride) in elements.
struct View {
  halide_dimension_t dims[4] = {};
  halide_buffer_t buffer = {};
  void *base = nullptr;

  /// False if an extent or stride does not fit Halide's int32 fields.
  bool set(void *data, halide_type_t type, const int64_t (&shape)[4][2]) {
    for (int n = 0; n < 4; ++n) {
      if (shape[n][0] > INT32_MAX || shape[n][1] > INT32_MAX)
        return false;
      dims[n] = {0, int32_t(shape[n][0]), int32_t(shape[n][1]), 0};
    }
    base = data;
    buffer.type = type;
    buffer.dimensions = 4;
    buffer.dim = dims;
    return true;
  }
};

/// Runs the pipeline on the first `count` views (lse is the fifth, when
/// the kernel outputs it).
int callPipeline(void *pipeline, void *userContext, View *views, int count) {
  halide_buffer_t *b[5];
  for (int n = 0; n < count; ++n)
    b[n] = &views[n].buffer;
  if (count == 5)
    return reinterpret_cast<PipelineOutLse>(pipeline)(userContext, b[0], b[1], b[2], b[3], b[4]);
  return reinterpret_cast<PipelineOut>(pipeline)(userContext, b[0], b[1], b[2], b[3]);
}

void *at(const attnc_memref *m, int64_t bytes) {
  return static_cast<char *>(m->aligned) + m->offset * bytes;
}

/// Host views: Halide copies them to the device itself (inputs marked
/// host-dirty); afterwards the outputs come back and the device copies go.
int runOnHost(void *pipeline, View *views, int count) {
  for (int n = 0; n < count; ++n) {
    views[n].buffer.host = static_cast<uint8_t *>(views[n].base);
    views[n].buffer.flags = n < 3 ? halide_buffer_flag_host_dirty : 0;
  }
  int rc = callPipeline(pipeline, nullptr, views, count);
  for (int n = 0; n < count; ++n) {
    halide_buffer_t &buf = views[n].buffer;
    if (!buf.device_interface)
      continue;
    if (rc == 0 && n >= 3 && (buf.flags & halide_buffer_flag_device_dirty))
      rc = buf.device_interface->copy_to_host(nullptr, &buf);
    buf.device_interface->device_free(nullptr, &buf);
  }
  return rc;
}

/// Device views on CUDA memory, in the device's primary context.
int runOnCuda(void *pipeline, const halide_device_interface_t *cuda, View *views, int count,
              int64_t deviceId, void *stream) {
  std::string error;
  HalideCudaCall call{cudaPrimaryContext(deviceId, error), stream};
  if (!call.context) {
    setGridFailureDetail(error);
    return kGridNoDevice;
  }
  int rc = 0, wrapped = 0;
  for (; wrapped < count && rc == 0; ++wrapped)
    rc = cuda->wrap_native(&call, &views[wrapped].buffer,
                           reinterpret_cast<uint64_t>(views[wrapped].base), cuda);
  if (rc == 0)
    rc = callPipeline(pipeline, &call, views, count);
  for (int n = 0; n < wrapped; ++n)
    if (views[n].buffer.device)
      cuda->detach_native(&call, &views[n].buffer);
  return rc;
}

} // namespace

void attnc::rt::setGridFailureDetail(const std::string &detail) {
  std::snprintf(tlsDetail, sizeof(tlsDetail), "%s", detail.c_str());
}

std::string attnc::rt::gridFailure(int32_t code) {
  if (code == kGridNoDevice || code == kGridLaunchFailed)
    return tlsDetail;
  if (code == kGridTooLarge)
    return "a length or stride beyond 2^31 - 1 elements, which the Halide backend's 32-bit "
           "coordinates cannot address";
  if (code < 0)
    return "the kernel's Halide pipeline returned this Halide error code, e.g. a score_mod or "
           "mask_mod dividing by zero, or a failed device call (its message went to stderr)";
  return "an unknown failure";
}

/* Called by the grid functions attn-lower-flash-to-halide-call emits; `cuda` is
 * Halide's CUDA device interface, or NULL for host tensors (OpenCL). */
extern "C" int32_t attnc_rt_halide_grid(void *pipeline, const halide_device_interface_t *cuda,
                                        attnc_memref *q, attnc_memref *k, attnc_memref *v,
                                        attnc_memref *out, attnc_memref *lse,
                                        attnc_memref_i64 *params, int64_t batch,
                                        int64_t deviceId, void *stream, int64_t heads,
                                        int64_t kvHeads, int64_t dim, int64_t elemBytes,
                                        int64_t dtypeCode, int64_t wantLse) {
  const int64_t *p = params->aligned + params->offset;
  const int64_t seqQ = p[ATTNC_P_SEQ_Q], seqKv = p[ATTNC_P_SEQ_KV];
  const int64_t *qS = p + ATTNC_P_Q_STRIDES, *kS = p + ATTNC_P_K_STRIDES,
                *vS = p + ATTNC_P_V_STRIDES, *oS = p + ATTNC_P_OUT_STRIDES,
                *lS = p + ATTNC_P_LSE_STRIDES;
  // bf16 tensors are passed as their bits (FlashAlgorithm.cpp, bf16AsBits).
  halide_type_t type = dtypeCode == kDLBfloat ? halide_type_t(halide_type_uint, 16)
                                              : halideElementType(dtypeCode, elemBytes);
  halide_type_t f32(halide_type_float, 32);
  View views[5];
  bool fits =
      views[0].set(at(q, elemBytes), type,
                   {{dim, 1}, {seqQ, qS[2]}, {heads, qS[1]}, {batch, qS[0]}}) &&
      views[1].set(at(k, elemBytes), type,
                   {{dim, 1}, {seqKv, kS[2]}, {kvHeads, kS[1]}, {batch, kS[0]}}) &&
      views[2].set(at(v, elemBytes), type,
                   {{dim, 1}, {seqKv, vS[2]}, {kvHeads, vS[1]}, {batch, vS[0]}}) &&
      views[3].set(at(out, elemBytes), type,
                   {{dim, 1}, {seqQ, oS[2]}, {heads, oS[1]}, {batch, oS[0]}});
  // Every lane of a row stores the row's lse: d has stride 0.
  if (wantLse)
    fits = fits && views[4].set(at(lse, 4), f32,
                                {{dim, 0}, {seqQ, lS[2]}, {heads, lS[1]}, {batch, lS[0]}});
  if (!fits)
    return kGridTooLarge;
  int count = wantLse ? 5 : 4;
  return cuda ? runOnCuda(pipeline, cuda, views, count, deviceId, stream)
              : runOnHost(pipeline, views, count);
}
