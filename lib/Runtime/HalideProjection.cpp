//===- HalideProjection.cpp - attnc_rt_halide_projection ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile function of a Halide-backend projection kernel forwards here
// (ProjectionPipeline.h): item (b, m, n)'s rows of x, its columns of the
// weights and the bias become halide_buffer_t views, and the pipeline
// computes its rows of y in place, or, for a tile of fewer than 64 columns
// or fewer rows than the pipeline's register block, into scratch whose
// valid part is copied out. A NULL bias is a view of one zero at stride 0.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "HalideHooks.h"
#include "HalideView.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

using attnc::rt::at;
using attnc::rt::View;

namespace {

using Pipeline = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                         halide_buffer_t *);

bool fits(int64_t v) { return v >= 0 && v <= INT32_MAX; }

} // namespace

/* Declared by the tile functions that attn-lower-flash-to-halide-call emits
 * for attn.projection: item (b, m, n) is rows [m itemRows, ...) and columns
 * [n itemCols, ...) of y (the family's item, KernelInterface.h, passed in:
 * this file is also built from the installed sources, without that header).
 * Returns 0, a Halide error code (negative), or 2 when a stride does not fit
 * Halide's 32-bit coordinates. */
extern "C" int32_t attnc_rt_halide_projection(void *pipeline, attnc_memref *x, attnc_memref *w,
                                              attnc_memref *bias, attnc_memref *y,
                                              attnc_memref_i64 *params, int64_t b, int64_t m,
                                              int64_t n, int64_t in, int64_t out,
                                              int64_t elemBytes, int64_t dtypeCode,
                                              int64_t matmulWeights, int64_t itemRows,
                                              int64_t itemCols, int64_t minRows) {
  static const float zero = 0; // a NULL bias: this zero, at stride 0
  const int64_t *p = params->aligned + params->offset;
  const int64_t *xS = p + ATTNC_P_PROJ_X_STRIDES, *yS = p + ATTNC_P_PROJ_Y_STRIDES;
  const int64_t wS = p[ATTNC_P_PROJ_WEIGHT_STRIDES], biasS = p[ATTNC_P_PROJ_BIAS_STRIDES];
  const int64_t m0 = m * itemRows, rows = std::min(itemRows, p[ATTNC_P_PROJ_SEQ] - m0);
  const int64_t c0 = n * itemCols, cols = std::min(itemCols, out - c0);
  if (!fits(xS[1]) || !fits(yS[1]) || !fits(wS) || !fits(biasS))
    return 2;
  halide_type_t type = attnc::rt::halideElementType(dtypeCode, elemBytes);

  const int64_t xShape[2][2] = {{in, 1}, {rows, xS[1]}};
  View xv(at(x, b * xS[0] + m0 * xS[1], elemBytes), type, 2, xShape);
  const int64_t linearShape[2][2] = {{in, 1}, {cols, wS}};
  const int64_t matmulShape[2][2] = {{cols, 1}, {in, wS}};
  View wv(at(w, matmulWeights ? c0 : c0 * wS, elemBytes), type, 2,
          matmulWeights ? matmulShape : linearShape);
  const bool hasBias = bias->size > 0;
  const int64_t biasShape[1][2] = {{cols, hasBias ? biasS : 0}};
  View bv(hasBias ? static_cast<void *>(at(bias, c0 * biasS, elemBytes))
                  : const_cast<float *>(&zero),
          type, 1,
          biasShape);

  const bool inPlace = rows >= minRows && cols == itemCols;
  const int64_t computed = std::max(rows, minRows);
  std::vector<char> scratch(inPlace ? 0 : size_t(computed * itemCols * elemBytes));
  char *yTile = at(y, b * yS[0] + m0 * yS[1] + c0, elemBytes);
  const int64_t yShape[2][2] = {{itemCols, 1}, {computed, inPlace ? yS[1] : itemCols}};
  View yv(inPlace ? yTile : scratch.data(), type, 2, yShape);
  int rc = reinterpret_cast<Pipeline>(pipeline)(&xv.buffer, &wv.buffer, &bv.buffer, &yv.buffer);
  if (rc != 0 || inPlace)
    return rc;
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(yTile + r * yS[1] * elemBytes, scratch.data() + r * itemCols * elemBytes,
                size_t(cols * elemBytes));
  return 0;
}
