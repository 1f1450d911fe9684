//===- HalideView.h - halide_buffer_t views of attnc's tensors --*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the Halide backend's CPU adapters (HalideTile.cpp, HalideProjection.cpp)
// hand a work item's pipeline: views into the tile function's memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_HALIDEVIEW_H
#define ATTNC_LIB_RUNTIME_HALIDEVIEW_H

#include "attnc/Runtime/attnc_runtime.h"

#include "HalideRuntime.h"

#include <cstdint>

namespace attnc::rt {

/// The most dims of a view (a mod input's rank: ModInputs.h).
constexpr int kMaxViewRank = 8;

/// A halide_buffer_t over `host`, dims given innermost first as (extent,
/// stride) in elements.
struct View {
  halide_dimension_t dims[kMaxViewRank] = {};
  halide_buffer_t buffer = {};

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

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_HALIDEVIEW_H
