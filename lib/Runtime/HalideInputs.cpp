//===- HalideInputs.cpp - a Halide kernel's mod inputs as views -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mod inputs (a spec's `inputs`) go whole to a Halide pipeline, item
// (HalideTile.cpp) or grid (HalideGrid.cpp): each as a view of its own shape,
// which the table the thunk passes says how to compute from params.
//
//===----------------------------------------------------------------------===//

#include "HalideView.h"

#include <algorithm>
#include <climits>

int32_t attnc::rt::inputViews(attnc_memref **inputs, const int64_t *table, const int64_t *p,
                              std::vector<View> &views) {
  static const int32_t zero = 0;
  const bool keys = p[ATTNC_P_SEQ_KV] > 0;
  int64_t count = table[0], strideParam = table[1];
  const int64_t *entry = table + 2;
  views = std::vector<View>(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t code = entry[0], rank = entry[1];
    if (rank > kMaxViewRank)
      return 2;
    int64_t shape[kMaxViewRank][2];
    bool empty = false;
    for (int64_t n = 0; n < rank; ++n) {
      const int64_t *d = entry + 2 + 3 * n; // (param, scale, offset)
      int64_t extent = std::max<int64_t>(d[0] < 0 ? d[2] : d[1] * p[d[0]] + d[2], 0);
      int64_t stride = p[strideParam++];
      if (extent == 0 && keys) // inputs are arguments 5, ... (no weights in Halide)
        return ATTNC_ITEM_INDEX_FAILURE + 5 + int32_t(i);
      if (extent > INT32_MAX || stride > INT32_MAX || stride < 0)
        return 2;
      empty = empty || extent == 0;
      shape[rank - 1 - n][0] = std::max<int64_t>(extent, 1);
      shape[rank - 1 - n][1] = stride;
    }
    entry += 2 + 3 * rank;
    void *host = empty ? static_cast<void *>(const_cast<int32_t *>(&zero)) : at(inputs[i], 0, 4);
    if (empty)
      for (int64_t n = 0; n < rank; ++n)
        shape[n][1] = 0;
    views[size_t(i)].set(host, halide_type_t(halide_type_code_t(code), 32), int(rank), shape);
    views[size_t(i)].standIn = empty;
  }
  return 0;
}
