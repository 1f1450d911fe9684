//===- RoundToTest.cpp - the reference's rounding to f16 and bf16 --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// roundTo (lib/Reference/HostTensor.cpp) rounds doubles to f16 and bf16 by scaling and
// nearbyint; APFloat's conversion (round to nearest even, from the double directly, so no
// double rounding through float) is the oracle: the same value, bit for bit, over random
// doubles of every magnitude, the ties at each format's spacing, its subnormals and the
// overflow boundary.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/HostTensor.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace attnc;

namespace {
const llvm::fltSemantics &semanticsOf(ElementType type) {
  return type == ElementType::f16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
}

double oracle(ElementType type, double value) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(semanticsOf(type), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

uint64_t bitsOf(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

void expectSame(ElementType type, double value) {
  double want = oracle(type, value), got = roundTo(type, value);
  if (std::isnan(want))
    EXPECT_TRUE(std::isnan(got)) << value;
  else
    EXPECT_EQ(bitsOf(got), bitsOf(want)) << toString(type).str() << " of " << value
                                         << ": " << got << " instead of " << want;
}

/// A format's fraction bits and exponent range, from APFloat's description of it.
struct Format {
  ElementType type;
  int fractionBits, minExponent, maxExponent;
  explicit Format(ElementType type)
      : type(type),
        fractionBits(int(llvm::APFloat::semanticsPrecision(semanticsOf(type))) - 1),
        minExponent(llvm::APFloat::semanticsMinExponent(semanticsOf(type))),
        maxExponent(llvm::APFloat::semanticsMaxExponent(semanticsOf(type))) {}
};
const Format kFormats[] = {Format(ElementType::f16), Format(ElementType::bf16)};
} // namespace

TEST(RoundTo, RandomDoublesOfEveryMagnitude) {
  std::mt19937_64 rng(7);
  for (const Format &format : kFormats) {
    std::uniform_int_distribution<int> exponent(format.minExponent - format.fractionBits - 3,
                                                format.maxExponent + 2);
    for (int i = 0; i < 200000; ++i) {
      double mantissa = std::uniform_real_distribution<double>(1.0, 2.0)(rng);
      double value = std::ldexp(i % 2 ? -mantissa : mantissa, exponent(rng));
      expectSame(format.type, value);
    }
  }
}

TEST(RoundTo, TiesSubnormalsAndOverflow) {
  for (const Format &format : kFormats) {
    for (int e = format.minExponent - format.fractionBits - 2; e <= format.maxExponent; ++e) {
      double ulp = std::ldexp(1.0, std::max(e, format.minExponent) - format.fractionBits);
      for (int k = 0; k < 8; ++k) { // k / 2 ulps above 2^e: ties to odd and even neighbours
        double value = std::ldexp(1.0, e) + k * ulp / 2;
        expectSame(format.type, value);
        expectSame(format.type, -value);
        expectSame(format.type, std::nextafter(value, 0.0));
        expectSame(format.type, std::nextafter(value, INFINITY));
      }
    }
    double largest = std::ldexp(2.0 - std::ldexp(1.0, -format.fractionBits), format.maxExponent);
    double halfUlp = std::ldexp(1.0, format.maxExponent - format.fractionBits - 1);
    for (double value : {largest, largest + halfUlp, std::nextafter(largest + halfUlp, 0.0),
                         largest * 4, 1e300, 1e-300, 0.0, -0.0, double(INFINITY),
                         -double(INFINITY), double(NAN)})
      expectSame(format.type, value);
  }
}
