//===- HalideTile.cpp - attnc_rt_halide_tile ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile function of a Halide-backend kernel forwards here: the same flat
// memref views and params an MLIR kernel's tile function gets become
// halide_buffer_t views of one work item (q, out, lse: its rows; k, v: its kv
// head), and the kernel's Halide pipeline runs on them. The pipeline always
// computes block_q rows; a short last tile goes through a scratch buffer, so
// the pipeline's loops keep constant extents and nothing past the tensors is
// written. A spec's mod inputs go whole, as views of their own shapes (the
// table the tile function passes says how to compute them from params).
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "HalideHooks.h"
#include "HalideView.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using attnc::rt::at;
using attnc::rt::View;

/// The block_q tunable's upper bound (lib/Target/CPU/CpuTunables.cpp).
constexpr int64_t kMaxBlockQ = 256;

/// The pipeline's argv form: buffers as halide_buffer_t *, scalars by address,
/// in the order of FlashPipeline.h.
using Pipeline = int (*)(void **args);

} // namespace

/* Declared by the tile functions that attn-lower-flash-to-halide-call emits.
 * Returns 0, a Halide error code (negative), 2 when a length does not fit
 * Halide's 32-bit coordinates, 3 for a block_q past the tunable's range, or
 * ATTNC_ITEM_INDEX_FAILURE + arg for a mod's load outside input arg. */
extern "C" int32_t attnc_rt_halide_tile(void *pipeline, attnc_memref *q, attnc_memref *k,
                                        attnc_memref *v, attnc_memref *out, attnc_memref *lse,
                                        attnc_memref_i64 *params, int64_t b, int64_t h,
                                        int64_t qTile, int64_t blockQ, int64_t dim,
                                        int64_t group, int64_t elemBytes, int64_t dtypeCode,
                                        attnc_memref **inputs, const int64_t *inputTable) {
  const int64_t *p = params->aligned + params->offset;
  const int64_t seqQ = p[ATTNC_P_SEQ_Q], seqKv = p[ATTNC_P_SEQ_KV];
  if (seqQ > INT32_MAX || seqKv > INT32_MAX || b > INT32_MAX || h > INT32_MAX)
    return 2;
  const int64_t *qS = p + ATTNC_P_Q_STRIDES, *kS = p + ATTNC_P_K_STRIDES,
                *vS = p + ATTNC_P_V_STRIDES, *oS = p + ATTNC_P_OUT_STRIDES,
                *lS = p + ATTNC_P_LSE_STRIDES;
  const int64_t q0 = qTile * blockQ, rows = std::min(blockQ, seqQ - q0), kvHead = h / group;
  halide_type_t type = attnc::rt::halideElementType(dtypeCode, elemBytes);
  halide_type_t f32(halide_type_float, 32);

  const int64_t qShape[2][2] = {{dim, 1}, {rows, qS[2]}};
  const int64_t kShape[2][2] = {{dim, 1}, {seqKv, kS[2]}};
  const int64_t vShape[2][2] = {{dim, 1}, {seqKv, vS[2]}};
  View qv(at(q, b * qS[0] + h * qS[1] + q0 * qS[2], elemBytes), type, 2, qShape);
  View kv(at(k, b * kS[0] + kvHead * kS[1], elemBytes), type, 2, kShape);
  View vv(at(v, b * vS[0] + kvHead * vS[1], elemBytes), type, 2, vShape);

  // out and lse in place for a whole tile, else through scratch rows.
  bool whole = rows == blockQ, wantLse = lse->size > 0;
  std::vector<char> outScratch(whole ? 0 : size_t(blockQ * dim * elemBytes));
  // The pipeline always writes lse: without one, its rows land here (on the
  // stack: that is every call of an out-only kernel). block_q is at most 256.
  float lseScratch[kMaxBlockQ];
  if (blockQ > kMaxBlockQ)
    return 3;
  char *outRows = at(out, b * oS[0] + h * oS[1] + q0 * oS[2], elemBytes);
  float *lseRows =
      wantLse ? reinterpret_cast<float *>(at(lse, b * lS[0] + h * lS[1] + q0 * lS[2], 4))
              : nullptr;
  const int64_t oShape[2][2] = {{dim, 1}, {blockQ, whole ? oS[2] : dim}};
  const int64_t lShape[1][2] = {{blockQ, whole && wantLse ? lS[2] : 1}};
  View ov(whole ? outRows : outScratch.data(), type, 2, oShape);
  View lv(whole && wantLse ? static_cast<void *>(lseRows) : lseScratch, f32, 1, lShape);

  std::vector<View> inputViewsOf;
  if (inputTable)
    if (int32_t rc = attnc::rt::inputViews(inputs, inputTable, p, inputViewsOf); rc != 0)
      return rc;
  int32_t b32 = int32_t(b), h32 = int32_t(h), q032 = int32_t(q0), seqQ32 = int32_t(seqQ),
          seqKv32 = int32_t(seqKv);
  std::vector<void *> args{&qv.buffer, &kv.buffer, &vv.buffer, &b32, &h32, &q032, &seqQ32,
                           &seqKv32};
  for (View &in : inputViewsOf)
    args.push_back(&in.buffer);
  args.insert(args.end(), {&ov.buffer, &lv.buffer});
  int rc = reinterpret_cast<Pipeline>(pipeline)(args.data());
  if (rc == halide_error_code_requirement_failed)
    if (int32_t arg = attnc::rt::takeHalideIndexFailure(); arg >= 0)
      return ATTNC_ITEM_INDEX_FAILURE + arg;
  if (rc != 0 || whole)
    return rc;
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(outRows + r * oS[2] * elemBytes, outScratch.data() + r * dim * elemBytes,
                size_t(dim * elemBytes));
    if (wantLse)
      lseRows[r * lS[2]] = lseScratch[r];
  }
  return 0;
}
