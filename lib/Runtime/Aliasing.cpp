//===- Aliasing.cpp - address-range facts of strided tensors --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Aliasing.h"

#include <algorithm>
#include <utility>

bool attnc::rt::injective(const int64_t *shape, const int64_t *strides, int rank) {
  std::pair<int64_t, int64_t> dims[8]; // (stride, extent) of extents > 1
  int n = 0;
  for (int i = 0; i < rank && i < 8; ++i)
    if (shape[i] > 1)
      dims[n++] = {strides[i], shape[i]};
  std::sort(dims, dims + n);
  // The largest offset the dimensions so far reach; strides were checked to
  // keep every reachable offset within int64.
  int64_t reach = 0;
  for (int i = 0; i < n; ++i) {
    if (dims[i].first <= reach)
      return false;
    reach += (dims[i].second - 1) * dims[i].first;
  }
  return true;
}
