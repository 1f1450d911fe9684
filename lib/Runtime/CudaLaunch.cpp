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
// descriptor it is (5 parameters): q, k, v, out, lse, then a spec's mod
// inputs and a status word (a device int32 allocated per call) when it has
// any; then the params array's values; one CTA per (query tile, head,
// batch). The sm_90a kernel first takes the TMA tensor maps of q, k and v,
// built here per call from the views (by value: 128 bytes each). A kernel of
// several phases (a split-KV decode) launches each through
// attnc_rt_cuda_launch_views, its grid function stating the grid.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CudaDriver.h"
#include "Describe.h"
#include "HalideGrid.h"

#include <climits>
#include <cstdint>
#include <vector>

using namespace attnc::rt;

namespace {

/// Why the kernel cannot take these views ("" if it can): cp.async copies
/// 16-byte pieces of rows, so q, k, v rows must start 16-byte aligned, and
/// out is written in element pairs.
std::string misalignment(attnc_memref *const views[], const int64_t *p, int64_t elemBytes,
                         int count = 4) {
  static const char *names[] = {"q", "k", "v", "out"};
  const int64_t firstStride[] = {ATTNC_P_Q_STRIDES, ATTNC_P_K_STRIDES, ATTNC_P_V_STRIDES,
                                 ATTNC_P_OUT_STRIDES};
  for (int n = 0; n < count; ++n) {
    int64_t align = n < 3 ? 16 : 2 * elemBytes;
    auto address = reinterpret_cast<uintptr_t>(views[n]->aligned) +
                   uintptr_t(views[n]->offset * elemBytes);
    bool ok = address % align == 0;
    for (int s = 0; s < 3; ++s)
      ok = ok && (p[firstStride[n] + s] * elemBytes) % align == 0;
    if (!ok)
      return cat("the CUDA kernels need ", names[n], " data and its batch, head and seq "
                 "strides aligned to ", align, " bytes (head_dim contiguous; e.g. strides "
                 "multiples of ", align / elemBytes, " elements)");
  }
  return "";
}

/// A CUtensorMap's storage.
struct alignas(64) TensorMap {
  unsigned char bytes[128];
};

/// The tensor map of `view` as (head_dim, seq, heads, batch) with strides
/// from params[firstStride..+3) (batch, head, seq), copied in boxes of 64
/// columns x `rows` rows. Empty dimensions become 1: the kernel never loads
/// from them.
bool encodeMap(TensorMap &map, attnc_memref *view, const int64_t *p, int firstStride,
               int64_t dim, int64_t seq, int64_t heads, int64_t batch, int64_t rows,
               std::string &error) {
  auto atLeastOne = [](int64_t n) { return uint64_t(n < 1 ? 1 : n); };
  const uint64_t dims[4] = {uint64_t(dim), atLeastOne(seq), atLeastOne(heads), atLeastOne(batch)};
  const uint64_t strides[3] = {uint64_t(p[firstStride + 2]) * 2, uint64_t(p[firstStride + 1]) * 2,
                               uint64_t(p[firstStride]) * 2};
  const uint32_t box[4] = {64, uint32_t(rows), 1, 1};
  char *data = static_cast<char *>(view->aligned) + view->offset * 2;
  return cudaEncodeTensorMap(map.bytes, data, dims, strides, box, error);
}

/// What the sm_90a kernel's tensor maps need beyond the launch facts.
struct TmaShape {
  int64_t kvHeads, dim, blockKv;
};

/// Appends the five fields of memref descriptor `m` (kernel parameters).
void appendFields(std::vector<void *> &args, attnc_memref *m) {
  for (void *field : {static_cast<void *>(&m->allocated), static_cast<void *>(&m->aligned),
                      static_cast<void *>(&m->offset), static_cast<void *>(&m->size),
                      static_cast<void *>(&m->stride)})
    args.push_back(field);
}

/// The status word's fields, kernel parameters after the views.
void appendStatus(std::vector<void *> &args, CudaStatusWord &status) {
  for (void *field : {static_cast<void *>(&status.allocated), static_cast<void *>(&status.aligned),
                      static_cast<void *>(&status.offset), static_cast<void *>(&status.size),
                      static_cast<void *>(&status.stride)})
    args.push_back(field);
}

/// The mod inputs a kernel reads (`count` views), if any.
struct ModInputs {
  attnc_memref **views;
  int64_t count;
};

/// Checks the views and the grid, then launches; with `tma`, the q, k, v
/// tensor maps are built and passed by value before the views. A kernel
/// with mod inputs takes them and a status word after lse; a load outside
/// an input leaves ATTNC_ITEM_INDEX_FAILURE + its argument there, which is
/// returned.
int32_t launch(const void *image, const char *function, attnc_memref *const views[5],
               attnc_memref_i64 *params, int64_t batch, int64_t deviceId, void *stream,
               int64_t heads, int64_t elemBytes, int64_t blockQ, int64_t threads,
               int64_t sharedBytes, const TmaShape *tma, ModInputs inputs) {
  int64_t *p = params->aligned + params->offset;
  if (std::string why = misalignment(views, p, elemBytes); !why.empty()) {
    setGridFailureDetail(why);
    return kGridNoDevice;
  }
  TensorMap maps[3];
  std::string error;
  if (tma) {
    int64_t seqQ = p[ATTNC_P_SEQ_Q], seqKv = p[ATTNC_P_SEQ_KV];
    const TmaShape &t = *tma;
    if (!encodeMap(maps[0], views[0], p, ATTNC_P_Q_STRIDES, t.dim, seqQ, heads, batch, blockQ,
                   error) ||
        !encodeMap(maps[1], views[1], p, ATTNC_P_K_STRIDES, t.dim, seqKv, t.kvHeads, batch,
                   t.blockKv, error) ||
        !encodeMap(maps[2], views[2], p, ATTNC_P_V_STRIDES, t.dim, seqKv, t.kvHeads, batch,
                   t.blockKv, error)) {
      setGridFailureDetail(error);
      return kGridNoDevice;
    }
  }
  int64_t tiles = (p[ATTNC_P_SEQ_Q] + blockQ - 1) / blockQ;
  if (tiles > INT32_MAX || heads > 65535 || batch > 65535) {
    setGridFailureDetail(cat("a grid of ", tiles, " x ", heads, " x ", batch,
                             " CTAs (query tiles x heads x batch) is beyond CUDA's limits "
                             "(2^31 - 1 x 65535 x 65535)"));
    return kGridNoDevice;
  }
  // Loads are clamped into their input (FlashMmaTile.cpp), so each must hold
  // an element: an empty one fails the call, as on Halide's targets.
  for (int64_t i = 0; i < inputs.count; ++i)
    if (inputs.views[i]->size == 0) // inputs are arguments 5, ... (no weights in CUDA)
      return ATTNC_ITEM_INDEX_FAILURE + 5 + int32_t(i);
  std::vector<void *> args;
  for (int i = 0; tma && i < 3; ++i)
    args.push_back(maps[i].bytes);
  for (int v = 0; v < 5; ++v)
    appendFields(args, views[v]);
  for (int64_t i = 0; i < inputs.count; ++i)
    appendFields(args, inputs.views[i]);
  CudaStatusWord status;
  if (inputs.count)
    appendStatus(args, status);
  // Every param: with inputs, batch and their strides follow ATTNC_P_COUNT.
  for (int64_t i = 0; i < params->size; ++i)
    args.push_back(&p[i]);
  const unsigned grid[3] = {unsigned(tiles), unsigned(heads), unsigned(batch)};
  bool ran = false;
  if (cudaLaunch(deviceId, image, function, grid, unsigned(threads), unsigned(sharedBytes),
                 stream, args.data(), error, ran, inputs.count ? &status : nullptr))
    return status.value;
  setGridFailureDetail(error);
  return ran ? kGridLaunchFailed : kGridNoDevice;
}

} // namespace

extern "C" int32_t attnc_rt_cuda_launch(const void *image, const char *function,
                                        attnc_memref *q, attnc_memref *k, attnc_memref *v,
                                        attnc_memref *out, attnc_memref *lse,
                                        attnc_memref_i64 *params, int64_t batch,
                                        int64_t deviceId, void *stream, int64_t heads,
                                        int64_t elemBytes, int64_t blockQ, int64_t threads,
                                        int64_t sharedBytes, attnc_memref **inputs,
                                        int64_t inputCount) {
  attnc_memref *views[] = {q, k, v, out, lse};
  return launch(image, function, views, params, batch, deviceId, stream, heads, elemBytes,
                blockQ, threads, sharedBytes, nullptr, {inputs, inputCount});
}

extern "C" int32_t attnc_rt_cuda_launch_tma(const void *image, const char *function,
                                            attnc_memref *q, attnc_memref *k, attnc_memref *v,
                                            attnc_memref *out, attnc_memref *lse,
                                            attnc_memref_i64 *params, int64_t batch,
                                            int64_t deviceId, void *stream, int64_t heads,
                                            int64_t kvHeads, int64_t dim, int64_t blockKv,
                                            int64_t blockQ, int64_t threads,
                                            int64_t sharedBytes, attnc_memref **inputs,
                                            int64_t inputCount) {
  attnc_memref *views[] = {q, k, v, out, lse};
  const TmaShape tma{kvHeads, dim, blockKv};
  return launch(image, function, views, params, batch, deviceId, stream, heads, 2, blockQ,
                threads, sharedBytes, &tma, {inputs, inputCount});
}

/// A phase of a kernel whose launch the grid function states whole (a
/// split-KV decode's two phases): the kernel takes every view (arguments,
/// then scratch), with mod inputs (views [firstInput, + inputCount), which
/// are also the arguments of those numbers) a status word, then the params.
/// The first `alignedViews` of q, k and v are copied by cp.async.
extern "C" int32_t attnc_rt_cuda_launch_views(const void *image, const char *function,
                                              attnc_memref **views, int64_t viewCount,
                                              attnc_memref_i64 *params, int64_t deviceId,
                                              void *stream, int64_t gridX, int64_t gridY,
                                              int64_t gridZ, int64_t threads,
                                              int64_t sharedBytes, int64_t elemBytes,
                                              int64_t alignedViews, int64_t firstInput,
                                              int64_t inputCount) {
  int64_t *p = params->aligned + params->offset;
  if (std::string why = misalignment(views, p, elemBytes, int(alignedViews)); !why.empty()) {
    setGridFailureDetail(why);
    return kGridNoDevice;
  }
  if (gridX > INT32_MAX || gridY > 65535 || gridZ > 65535) {
    setGridFailureDetail(cat("a grid of ", gridX, " x ", gridY, " x ", gridZ,
                             " CTAs is beyond CUDA's limits (2^31 - 1 x 65535 x 65535)"));
    return kGridNoDevice;
  }
  for (int64_t i = 0; i < inputCount; ++i)
    if (views[firstInput + i]->size == 0)
      return ATTNC_ITEM_INDEX_FAILURE + int32_t(firstInput + i);
  std::vector<void *> args;
  for (int64_t v = 0; v < viewCount; ++v)
    appendFields(args, views[v]);
  CudaStatusWord status;
  if (inputCount)
    appendStatus(args, status);
  for (int64_t i = 0; i < params->size; ++i)
    args.push_back(&p[i]);
  const unsigned grid[3] = {unsigned(gridX), unsigned(gridY), unsigned(gridZ)};
  bool ran = false;
  std::string error;
  if (cudaLaunch(deviceId, image, function, grid, unsigned(threads), unsigned(sharedBytes),
                 stream, args.data(), error, ran, inputCount ? &status : nullptr))
    return status.value;
  setGridFailureDetail(error);
  return ran ? kGridLaunchFailed : kGridNoDevice;
}
