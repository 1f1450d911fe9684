//===- ElementCodec.h - Elements of kernel tensors as floats ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads and writes elements of the DLPack tensors a kernel takes: float32,
// and the raw 16-bit patterns of float16 (IEEE half) and bfloat16 (the top
// half of a float32). The conversions never round: reading is always exact,
// and writing is exact for a value the element type can represent, which is
// all callers store. Rounding to the type is the caller's job (attnc-run uses
// the reference's roundTo), so that attnc has one definition of round to
// nearest even. Plain C++17 without LLVM (the compiler's _Float16 does the
// float16 bit layout), for the tools and the runtime's unit tests alike.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_ELEMENTCODEC_H
#define ATTNC_RUNTIME_ELEMENTCODEC_H

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>

namespace attnc {

/// Bytes per element of `type` (one lane).
inline int64_t elementBytes(DLDataType type) { return type.bits / 8; }

/// Element `i` of `base`, of type float32, float16 (kDLFloat, 16) or bfloat16.
inline float loadElement(DLDataType type, const void *base, int64_t i) {
  const char *p = static_cast<const char *>(base) + i * elementBytes(type);
  float value;
  if (type.bits == 32) {
    std::memcpy(&value, p, sizeof value);
  } else if (type.code == kDLBfloat) {
    uint16_t half;
    std::memcpy(&half, p, sizeof half);
    uint32_t bits = uint32_t(half) << 16;
    std::memcpy(&value, &bits, sizeof value);
  } else {
    _Float16 half;
    std::memcpy(&half, p, sizeof half);
    value = static_cast<float>(half);
  }
  return value;
}

/// Stores `value`, which must be representable in `type` (else a bfloat16
/// is truncated and a float16 rounded), as element `i` of `base`.
inline void storeElement(DLDataType type, void *base, int64_t i, float value) {
  char *p = static_cast<char *>(base) + i * elementBytes(type);
  if (type.bits == 32) {
    std::memcpy(p, &value, sizeof value);
  } else if (type.code == kDLBfloat) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    uint16_t half = static_cast<uint16_t>(bits >> 16);
    std::memcpy(p, &half, sizeof half);
  } else {
    _Float16 half = static_cast<_Float16>(value);
    std::memcpy(p, &half, sizeof half);
  }
}

} // namespace attnc

#endif // ATTNC_RUNTIME_ELEMENTCODEC_H
