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
// A spec's mod inputs go whole, as on the CPU (HalideInputs.cpp). GPU code
// holds no assertions, so the pipeline clamps every load and writes a second
// output, an int32 per (query row, head, batch): the argument of an input a
// mod loaded outside of, or 0. It lives on the host and comes back through a
// device copy (on CUDA the call then waits for the kernel); a non-zero entry
// fails the call with that input named.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CudaDriver.h"
#include "Describe.h"
#include "HalideGrid.h"
#include "HalideHooks.h"
#include "HalideView.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>

using namespace attnc::rt;
using attnc::rt::View;

namespace {

thread_local char tlsDetail[512] = "";

/// A view of a grid call, in the pipeline's argument order. A native one
/// wraps the caller's device memory (CUDA tensors); the others are host
/// buffers Halide copies to the device and, outputs, back.
struct GridArg {
  View *view;
  bool output = false;
  void *device = nullptr; // native: the tensor's device address
  bool wrapped = false;
};

/// Sets `view` over `data` with `shape` (dims innermost first, (extent,
/// stride) in elements); false if an extent or stride does not fit Halide's
/// int32 fields.
template <int N>
bool setView(View &view, void *data, halide_type_t type, const int64_t (&shape)[N][2]) {
  for (const auto &dim : shape)
    if (dim[0] > INT32_MAX || dim[1] > INT32_MAX)
      return false;
  view.set(data, type, N, shape);
  return true;
}

/// Runs the pipeline's argv form: the user context, then every buffer.
int callPipeline(void *pipeline, void *userContext, std::vector<GridArg> &args) {
  std::vector<void *> argv{&userContext};
  for (GridArg &a : args)
    argv.push_back(&a.view->buffer);
  return reinterpret_cast<int (*)(void **)>(pipeline)(argv.data());
}

/// Wraps the native views, runs the pipeline, then copies host-backed
/// outputs back and lets go of every device allocation.
int runGrid(void *pipeline, const halide_device_interface_t *cuda, void *userContext,
            std::vector<GridArg> &args) {
  int rc = 0;
  for (GridArg &a : args) {
    halide_buffer_t &buf = a.view->buffer;
    if (a.device) {
      buf.host = nullptr;
      rc = cuda->wrap_native(userContext, &buf, reinterpret_cast<uint64_t>(a.device), cuda);
      a.wrapped = rc == 0;
      if (rc)
        break;
    } else if (!a.output) {
      buf.flags = halide_buffer_flag_host_dirty;
    }
  }
  if (rc == 0)
    rc = callPipeline(pipeline, userContext, args);
  for (GridArg &a : args) {
    halide_buffer_t &buf = a.view->buffer;
    if (a.wrapped) {
      cuda->detach_native(userContext, &buf);
      continue;
    }
    if (a.device || !buf.device_interface)
      continue;
    // The copy waits for the kernel (on the caller's stream, under CUDA).
    if (rc == 0 && a.output && (buf.flags & halide_buffer_flag_device_dirty))
      rc = buf.device_interface->device_sync(userContext, &buf);
    if (rc == 0 && a.output && (buf.flags & halide_buffer_flag_device_dirty))
      rc = buf.device_interface->copy_to_host(userContext, &buf);
    buf.device_interface->device_free(userContext, &buf);
  }
  return rc;
}

void *at(const attnc_memref *m, int64_t bytes) { return attnc::rt::at(m, 0, bytes); }

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
 * Halide's CUDA device interface, or NULL for host tensors (OpenCL). The mod
 * inputs come as HalideTile.cpp's do (NULL, NULL without). Returns 0, a
 * HalideGrid.h code, a Halide error code (negative), or, where a mod loaded
 * outside an input, ATTNC_ITEM_INDEX_FAILURE + its argument. */
extern "C" int32_t attnc_rt_halide_grid(void *pipeline, const halide_device_interface_t *cuda,
                                        attnc_memref *q, attnc_memref *k, attnc_memref *v,
                                        attnc_memref *out, attnc_memref *lse,
                                        attnc_memref_i64 *params, int64_t batch,
                                        int64_t deviceId, void *stream, int64_t heads,
                                        int64_t kvHeads, int64_t dim, int64_t elemBytes,
                                        int64_t dtypeCode, int64_t wantLse,
                                        attnc_memref **inputs, const int64_t *inputTable) {
  const int64_t *p = params->aligned + params->offset;
  const int64_t seqQ = p[ATTNC_P_SEQ_Q], seqKv = p[ATTNC_P_SEQ_KV];
  const int64_t *qS = p + ATTNC_P_Q_STRIDES, *kS = p + ATTNC_P_K_STRIDES,
                *vS = p + ATTNC_P_V_STRIDES, *oS = p + ATTNC_P_OUT_STRIDES,
                *lS = p + ATTNC_P_LSE_STRIDES;
  // bf16 tensors are passed as their bits (FlashAlgorithm.cpp, bf16AsBits).
  halide_type_t type = dtypeCode == kDLBfloat ? halide_type_t(halide_type_uint, 16)
                                              : halideElementType(dtypeCode, elemBytes);
  halide_type_t f32(halide_type_float, 32), i32(halide_type_int, 32);
  View views[5], failureView;
  bool fits =
      setView(views[0], at(q, elemBytes), type,
              {{dim, 1}, {seqQ, qS[2]}, {heads, qS[1]}, {batch, qS[0]}}) &&
      setView(views[1], at(k, elemBytes), type,
              {{dim, 1}, {seqKv, kS[2]}, {kvHeads, kS[1]}, {batch, kS[0]}}) &&
      setView(views[2], at(v, elemBytes), type,
              {{dim, 1}, {seqKv, vS[2]}, {kvHeads, vS[1]}, {batch, vS[0]}}) &&
      setView(views[3], at(out, elemBytes), type,
              {{dim, 1}, {seqQ, oS[2]}, {heads, oS[1]}, {batch, oS[0]}});
  // Every lane of a row stores the row's lse: d has stride 0.
  if (wantLse)
    fits = fits && setView(views[4], at(lse, 4), f32,
                           {{dim, 0}, {seqQ, lS[2]}, {heads, lS[1]}, {batch, lS[0]}});
  // With inputs, the pipeline's index-failure rows (FlashAlgorithm.cpp).
  std::vector<int32_t> failures(inputTable ? size_t(std::max<int64_t>(seqQ * heads * batch, 1))
                                           : 0);
  if (inputTable)
    fits = fits && setView(failureView, failures.data(), i32,
                           {{seqQ, 1}, {heads, seqQ}, {batch, seqQ * heads}});
  if (!fits)
    return kGridTooLarge;
  std::vector<View> inputViews;
  if (inputTable)
    if (int32_t rc = attnc::rt::inputViews(inputs, inputTable, p, inputViews); rc != 0)
      return rc == 2 ? kGridTooLarge : rc;

  auto native = [&](View &view, bool standIn = false) {
    return cuda && !standIn ? static_cast<void *>(view.buffer.host) : nullptr;
  };
  std::vector<GridArg> args;
  for (int n = 0; n < 3; ++n)
    args.push_back({&views[n], false, native(views[n])});
  for (View &in : inputViews)
    args.push_back({&in, false, native(in, in.standIn)});
  for (int n = 3; n < (wantLse ? 5 : 4); ++n)
    args.push_back({&views[n], true, native(views[n])});
  if (inputTable)
    args.push_back({&failureView, true, nullptr});

  int rc;
  if (cuda) {
    std::string error;
    HalideCudaCall call{cudaPrimaryContext(deviceId, error), stream};
    if (!call.context) {
      setGridFailureDetail(error);
      return kGridNoDevice;
    }
    rc = runGrid(pipeline, cuda, &call, args);
  } else {
    rc = runGrid(pipeline, nullptr, nullptr, args);
  }
  int32_t failed = 0;
  for (int32_t arg : failures)
    failed = std::max(failed, arg);
  return rc == 0 && failed ? ATTNC_ITEM_INDEX_FAILURE + failed : rc;
}
