//===- HostTensor.cpp - dense host tensors for the reference path --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/HostTensor.h"
#include "attnc/Support/SplitMix64.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace attnc;

llvm::StringRef attnc::toString(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return "f32";
  case ElementType::f16:
    return "f16";
  case ElementType::bf16:
    return "bf16";
  case ElementType::i32:
    return "i32";
  }
  llvm_unreachable("unknown element type");
}

std::optional<ElementType> attnc::elementTypeOf(mlir::Type type) {
  if (type.isF32())
    return ElementType::f32;
  if (type.isF16())
    return ElementType::f16;
  if (type.isBF16())
    return ElementType::bf16;
  if (type.isInteger(32))
    return ElementType::i32;
  return std::nullopt;
}

/// 2^n for n in [-1022, 1023], from its bits (ldexp was most of roundTo's time).
static double powerOfTwo(int n) {
  uint64_t bits = uint64_t(n + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

/// `value` rounded to nearest even at `fractionBits` bits after the point, with exponents
/// from `minExponent` (below it the spacing stays the smallest normal's: subnormals) to
/// `maxExponent` (past the largest finite value: infinity). Exact in double arithmetic:
/// scaling by powers of two is exact and nearbyint rounds ties to even in the default
/// rounding mode. APFloat gives the same (test/unittests/RoundToTest.cpp) at many times the
/// time, which was most of attnc-run's time on large bf16 cases.
static double roundToFormat(double value, int fractionBits, int minExponent,
                            int maxExponent) {
  if (value == 0 || !std::isfinite(value))
    return value;
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  // The exponent of a normal double; subnormal doubles (field 0) are far below minExponent.
  int exponent = std::max(int((bits >> 52) & 0x7ff) - 1023, minExponent);
  double rounded = std::nearbyint(value * powerOfTwo(fractionBits - exponent)) *
                   powerOfTwo(exponent - fractionBits);
  double largest = (2.0 - powerOfTwo(-fractionBits)) * powerOfTwo(maxExponent);
  return std::fabs(rounded) > largest ? std::copysign(INFINITY, value) : rounded;
}

double attnc::roundTo(ElementType type, double value) {
  switch (type) {
  case ElementType::f32:
    return static_cast<float>(value);
  case ElementType::f16:
    return roundToFormat(value, 10, -14, 15);
  case ElementType::bf16:
    return roundToFormat(value, 7, -126, 127);
  case ElementType::i32: // truncated toward zero and kept in range, as a cast does
    return double(int32_t(std::clamp(value, -2147483648.0, 2147483647.0)));
  }
  llvm_unreachable("unknown element type");
}

HostTensor::HostTensor(ElementType type, llvm::ArrayRef<int64_t> shape)
    : type(type), shape(shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  data.assign(n, 0.0);
}

std::string attnc::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

HostTensor attnc::randomTensor(ElementType type, llvm::ArrayRef<int64_t> shape,
                               uint64_t seed) {
  HostTensor t(type, shape);
  for (auto [i, x] : llvm::enumerate(t.data)) {
    uint64_t z = splitmix64(seed + i);
    double unit = static_cast<double>(z >> 11) * 0x1.0p-53; // [0, 1)
    x = roundTo(type, 2.0 * unit - 1.0);
  }
  return t;
}
double attnc::largestMagnitude(const HostTensor &t) {
  double m = 0;
  for (double x : t.data)
    m = std::max(m, std::fabs(x));
  return m;
}
