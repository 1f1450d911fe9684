//===- Aliasing.h - address-range facts of strided tensors ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the runtime checks before a kernel writes: that an output maps each
// element to its own address, and that outputs overlap neither each other
// nor an input. Both are decided from shapes and strides alone, without
// touching memory; the overlap test compares address ranges, so it also
// refuses interleaved views that would not collide (a conservative choice).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_ALIASING_H
#define ATTNC_LIB_RUNTIME_ALIASING_H

#include <cstdint>

namespace attnc::rt {

/// Bytes [begin, end) a tensor's elements lie in.
struct ByteRange {
  uintptr_t begin = 0, end = 0;
  bool overlaps(const ByteRange &o) const { return begin < o.end && o.begin < end; }
};

/// Whether distinct indices of a `rank`-d tensor with these extents and
/// (non-negative) strides always give distinct element offsets: sorted by
/// stride, each dimension of extent > 1 steps past everything the smaller
/// ones reach. (Sufficient; every dense or padded layout satisfies it.)
bool injective(const int64_t *shape, const int64_t *strides, int rank);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_ALIASING_H
