//===- HalideLinear.cpp - attnc_rt_halide_linear --------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile functions of a Halide-backend linear attention kernel forward
// here (LinearPipeline.h), one call per work item of the family's phases
// (KernelInterface.h: linearInterface):
//
//   phase 0, non-causal "state" (b, g): kv_state and kv_norm zeroed, then
//     the state pipeline folds the keys in slices of at most stateRows;
//   phase 1, non-causal "attention" (b, h, q_tile): the rows pipeline on the
//     tile's rows with (b, h's KV head)'s state;
//   phase 2, causal "attention" (b, g): a state on the stack (the initial
//     one, or 0), then chunk by chunk the rows pipeline for every query head
//     of g, and the state pipeline on the chunk's keys; with state = carry
//     the state after the last chunk goes to final_state and final_norm.
//
// An item of fewer rows than the rows pipeline's register block writes them
// to scratch, copied out.
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

using StateFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                        halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
using CausalRowsFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                             halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
using RowsFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                       halide_buffer_t *);

constexpr halide_type_t kF32 = {halide_type_float, 32, 1};

bool fits(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/// A state S [head_dim, value_dim] (row stride `rowStride`) and its
/// normalizer z [head_dim], f32.
struct State {
  float *s, *z;
  int64_t rowStride;
};

struct Kernel {
  void *rowsPipeline, *statePipeline;
  attnc_memref *q, *k, *v, *out;
  const int64_t *p;
  int64_t headDim, valueDim, elemBytes, minRows;
  halide_type_t type;

  /// Rows [row0, row0 + rows) of head `h` of batch `b` of `t`, whose strides
  /// start at params[strides].
  void rowsView(View &view, attnc_memref *t, int strides, int64_t b, int64_t h, int64_t row0,
                int64_t rows, int64_t dim) const {
    const int64_t *st = p + strides;
    const int64_t shape[2][2] = {{dim, 1}, {rows, st[2]}};
    view.set(at(t, b * st[0] + h * st[1] + row0 * st[2], elemBytes), type, 2, shape);
  }

  void stateViews(View &s, View &z, const State &st) const {
    const int64_t sShape[2][2] = {{valueDim, 1}, {headDim, st.rowStride}};
    const int64_t zShape[1][2] = {{headDim, 1}};
    s.set(st.s, kF32, 2, sShape);
    z.set(st.z, kF32, 1, zShape);
  }

  /// Folds keys [row0, row0 + rows) of (b, g) into `st`, in place.
  int fold(const State &st, int64_t b, int64_t g, int64_t row0, int64_t rows) const {
    View kv, vv, sv, zv;
    rowsView(kv, k, ATTNC_P_K_STRIDES, b, g, row0, rows, headDim);
    rowsView(vv, v, ATTNC_P_V_STRIDES, b, g, row0, rows, valueDim);
    stateViews(sv, zv, st);
    return reinterpret_cast<StateFn>(statePipeline)(&kv.buffer, &vv.buffer, &sv.buffer,
                                                    &zv.buffer, &sv.buffer, &zv.buffer);
  }

  /// Rows [row0, row0 + rows) of out for head h of batch b from `st` (and,
  /// causal, the keys of KV head g at those rows).
  int attend(const State &st, bool causal, int64_t b, int64_t h, int64_t g, int64_t row0,
             int64_t rows) const {
    View qv, kv, vv, sv, zv, ov;
    rowsView(qv, q, ATTNC_P_Q_STRIDES, b, h, row0, rows, headDim);
    stateViews(sv, zv, st);
    const bool inPlace = rows >= minRows;
    std::vector<char> scratch(inPlace ? 0 : size_t(minRows * valueDim * elemBytes));
    if (inPlace) {
      rowsView(ov, out, ATTNC_P_OUT_STRIDES, b, h, row0, rows, valueDim);
    } else {
      const int64_t shape[2][2] = {{valueDim, 1}, {minRows, valueDim}};
      ov.set(scratch.data(), type, 2, shape);
    }
    int rc;
    if (causal) {
      rowsView(kv, k, ATTNC_P_K_STRIDES, b, g, row0, rows, headDim);
      rowsView(vv, v, ATTNC_P_V_STRIDES, b, g, row0, rows, valueDim);
      rc = reinterpret_cast<CausalRowsFn>(rowsPipeline)(&qv.buffer, &kv.buffer, &vv.buffer,
                                                      &sv.buffer, &zv.buffer, &ov.buffer);
    } else {
      rc = reinterpret_cast<RowsFn>(rowsPipeline)(&qv.buffer, &sv.buffer, &zv.buffer,
                                                &ov.buffer);
    }
    if (rc != 0 || inPlace)
      return rc;
    const int64_t *os = p + ATTNC_P_OUT_STRIDES;
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(at(out, b * os[0] + h * os[1] + (row0 + r) * os[2], elemBytes),
                  scratch.data() + r * valueDim * elemBytes, size_t(valueDim * elemBytes));
    return 0;
  }
};

/// The state of (b, g) in a state tensor and its normalizer, strides from
/// params[sStrides] (batch, kv head, row) and params[zStrides] (batch, kv head).
State stateAt(attnc_memref *s, attnc_memref *z, const int64_t *p, int sStrides, int zStrides,
              int64_t b, int64_t g) {
  const int64_t *ss = p + sStrides, *zs = p + zStrides;
  return {reinterpret_cast<float *>(at(s, b * ss[0] + g * ss[1], 4)),
          reinterpret_cast<float *>(at(z, b * zs[0] + g * zs[1], 4)), ss[2]};
}

/// head_dim rows of value_dim floats from `from` to `to` (row strides given).
void copyRows(const float *from, int64_t fromStride, float *to, int64_t toStride,
              int64_t headDim, int64_t valueDim) {
  for (int64_t d = 0; d < headDim; ++d)
    std::memcpy(to + d * toStride, from + d * fromStride, size_t(valueDim) * 4);
}

void zeroState(const State &st, int64_t headDim, int64_t valueDim) {
  for (int64_t d = 0; d < headDim; ++d)
    std::fill(st.s + d * st.rowStride, st.s + d * st.rowStride + valueDim, 0.0f);
  std::fill(st.z, st.z + headDim, 0.0f);
}

/// A causal item: `carry` holds initial_state, initial_norm (each may be
/// NULL: size 0), final_state and final_norm, or is null.
int causalItem(const Kernel &kn, attnc_memref **carry, int64_t b, int64_t g, int64_t group,
               int64_t chunk) {
  const int64_t *p = kn.p, hd = kn.headDim, vd = kn.valueDim;
  std::vector<float> s(static_cast<size_t>(hd * vd)), z(static_cast<size_t>(hd));
  State st{s.data(), z.data(), vd};
  if (carry && carry[0]->size > 0) {
    const int64_t *ss = p + ATTNC_P_INITIAL_STATE_STRIDES;
    copyRows(reinterpret_cast<float *>(at(carry[0], b * ss[0] + g * ss[1], 4)), ss[2], st.s,
             vd, hd, vd);
  }
  if (carry && carry[1]->size > 0) {
    const int64_t *ns = p + ATTNC_P_INITIAL_NORM_STRIDES;
    std::memcpy(st.z, at(carry[1], b * ns[0] + g * ns[1], 4), size_t(hd) * 4);
  }
  const int64_t seq = p[ATTNC_P_SEQ_Q];
  for (int64_t row0 = 0; row0 < seq; row0 += chunk) {
    const int64_t rows = std::min(chunk, seq - row0);
    for (int64_t h = g * group; h < (g + 1) * group; ++h)
      if (int rc = kn.attend(st, /*causal=*/true, b, h, g, row0, rows))
        return rc;
    if (int rc = kn.fold(st, b, g, row0, rows)) // chunk <= 128 <= kLinearStateRows
      return rc;
  }
  if (carry) {
    State fin = stateAt(carry[2], carry[3], p, ATTNC_P_FINAL_STATE_STRIDES,
                        ATTNC_P_FINAL_NORM_STRIDES, b, g);
    copyRows(st.s, vd, fin.s, fin.rowStride, hd, vd);
    std::memcpy(fin.z, st.z, size_t(hd) * 4);
  }
  return 0;
}

} // namespace

/* Declared by the tile functions that attn-lower-flash-to-halide-call emits
 * for attn.linear_attention: `phase` 0 (non-causal state), 1 (non-causal
 * attention) or 2 (causal), item (c0, c1, c2) of it; t4..t7 are the
 * interface's tensors after out (kv_state, kv_norm, or with `carry` the
 * initial and final states; null where the kernel has none). Returns 0, a
 * Halide error code (negative), or 2 when a stride does not fit Halide's
 * 32-bit coordinates. */
extern "C" int32_t attnc_rt_halide_linear(
    void *rows, void *state, attnc_memref *q, attnc_memref *k, attnc_memref *v,
    attnc_memref *out, attnc_memref *t4, attnc_memref *t5, attnc_memref *t6, attnc_memref *t7,
    attnc_memref_i64 *params, int64_t c0, int64_t c1, int64_t c2, int64_t phase, int64_t heads,
    int64_t kvHeads, int64_t headDim, int64_t valueDim, int64_t elemBytes, int64_t dtypeCode,
    int64_t chunk, int64_t stateRows, int64_t minRows, int64_t carry) {
  const int64_t *p = params->aligned + params->offset;
  for (int t : {ATTNC_P_Q_STRIDES, ATTNC_P_K_STRIDES, ATTNC_P_V_STRIDES, ATTNC_P_OUT_STRIDES})
    if (!fits(p[t + 2]))
      return 2;
  Kernel kn{rows, state, q, k, v, out, p, headDim, valueDim, elemBytes, minRows,
            attnc::rt::halideElementType(dtypeCode, elemBytes)};
  const int64_t group = heads / kvHeads;
  if (phase == 2) {
    attnc_memref *carried[4] = {t4, t5, t6, t7};
    return causalItem(kn, carry ? carried : nullptr, c0, c1, group, chunk);
  }
  if (!fits(p[ATTNC_P_KV_STATE_STRIDES + 2]))
    return 2;
  if (phase == 0) {
    State st = stateAt(t4, t5, p, ATTNC_P_KV_STATE_STRIDES, ATTNC_P_KV_NORM_STRIDES, c0, c1);
    zeroState(st, headDim, valueDim);
    const int64_t seqKv = p[ATTNC_P_SEQ_KV];
    for (int64_t row0 = 0; row0 < seqKv; row0 += stateRows)
      if (int rc = kn.fold(st, c0, c1, row0, std::min(stateRows, seqKv - row0)))
        return rc;
    return 0;
  }
  const int64_t g = c1 / group, row0 = c2 * chunk;
  State st = stateAt(t4, t5, p, ATTNC_P_KV_STATE_STRIDES, ATTNC_P_KV_NORM_STRIDES, c0, g);
  return kn.attend(st, /*causal=*/false, c0, c1, g, row0,
                   std::min(chunk, p[ATTNC_P_SEQ_Q] - row0));
}
