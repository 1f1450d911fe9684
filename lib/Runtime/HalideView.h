//===- HalideView.h - halide_buffer_t views of attnc's tensors --*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the Halide backend's adapters (HalideTile.cpp, HalideProjection.cpp,
// HalideGrid.cpp) hand a pipeline: views into the thunk's memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_HALIDEVIEW_H
#define ATTNC_LIB_RUNTIME_HALIDEVIEW_H

#include "attnc/Runtime/attnc_runtime.h"

#include "HalideRuntime.h"

#include <cstdint>
#include <vector>

namespace attnc::rt {

/// The most dims of a view (a mod input's rank: ModInputs.h).
constexpr int kMaxViewRank = 8;

/// A halide_buffer_t over `host`, dims given innermost first as (extent,
/// stride) in elements.
struct View {
  halide_dimension_t dims[kMaxViewRank] = {};
  halide_buffer_t buffer = {};
  /// A view of a zero on the host, standing in for an empty mod input.
  bool standIn = false;

  View() = default;
  View(const View &) = delete; // buffer points into this object
  View(void *host, halide_type_t type, int rank, const int64_t (*shape)[2]) {
    set(host, type, rank, shape);
  }
  void set(void *host, halide_type_t type, int rank, const int64_t (*shape)[2]) {
    for (int n = 0; n < rank; ++n)
      dims[n] = {0, static_cast<int32_t>(shape[n][0]), static_cast<int32_t>(shape[n][1]), 0};
    buffer.host = static_cast<uint8_t *>(host);
    buffer.type = type;
    buffer.dimensions = rank;
    buffer.dim = dims;
  }
};

/// The address of element `element` of a memref of `bytes`-byte elements.
inline char *at(const attnc_memref *m, int64_t element, int64_t bytes) {
  return static_cast<char *>(m->aligned) + (m->offset + element) * bytes;
}

/// Views of the mod inputs `inputs` from `table` (LowerFlashToHalideCall.cpp
/// lays it out): each of its own shape, dims innermost first. 0, 2 when an
/// extent or stride does not fit 32 bits, or ATTNC_ITEM_INDEX_FAILURE + arg
/// for an input with nothing in it when there are keys (every load of it
/// fails). A load is clamped into its input, so none is empty: without keys
/// (nothing is loaded) an empty one is a stand-in, a view of one zero.
int32_t inputViews(attnc_memref **inputs, const int64_t *table, const int64_t *p,
                   std::vector<View> &views);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_HALIDEVIEW_H
