//===- TensorSpecs.h - building kernel interfaces' tensor entries -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the families' interface builders share. Private to lib/Interface.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_INTERFACE_TENSORSPECS_H
#define ATTNC_LIB_INTERFACE_TENSORSPECS_H

#include "attnc/Interface/KernelInterface.h"

#include <cstring>

namespace attnc {

/// "batch,heads" -> "batch, heads".
inline std::string legendOf(std::string dims) {
  for (size_t at = dims.find(','); at != std::string::npos; at = dims.find(',', at + 2))
    dims.replace(at, 1, ", ");
  return dims;
}

/// A tensor's table entry from its fields.
inline TensorSpec tensorSpec(const char *name, const char *dims, const char *legend,
                             const char *strides, int32_t arg, int32_t flags,
                             int32_t dtypeCode, int32_t dtypeBits, int32_t param) {
  TensorSpec t;
  t.name = name;
  t.dims = dims;
  t.legend = legend;
  t.strides = strides;
  t.arg = arg;
  t.flags = flags;
  t.dtypeCode = dtypeCode;
  t.dtypeBits = dtypeBits;
  t.strideParam = param;
  return t;
}

/// An entry whose legend spells its dims.
inline TensorSpec dimsTensor(const char *name, const char *dims, const char *strides,
                             int32_t arg, int32_t flags, int32_t dtypeCode, int32_t dtypeBits,
                             int32_t param) {
  std::string legend = legendOf(dims);
  return tensorSpec(name, dims, legend.c_str(), strides, arg, flags, dtypeCode, dtypeBits,
                    param);
}

/// An int32 tensor of lengths, indices or offsets, entries within `bound`;
/// its outermost dim's stride goes to params (the innermost one's is 1).
inline TensorSpec indexTensor(const char *name, const char *dims, const char *legend,
                              const char *bound, int32_t arg, int32_t param) {
  std::string outer(dims, std::strcspn(dims, ","));
  TensorSpec t = tensorSpec(name, dims, legend, outer.c_str(), arg, ATTNC_TENSOR_UNIT_INNER,
                            kDLInt, 32, param);
  t.bound = bound;
  return t;
}

} // namespace attnc

#endif // ATTNC_LIB_INTERFACE_TENSORSPECS_H
