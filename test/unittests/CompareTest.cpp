//===- CompareTest.cpp - attnc-run's comparison of outputs ---------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// compareTensors: NaN matches NaN (a NaN input reaches the same rows of the kernel and the
// reference), and a mismatch of non-finite values names its element as the worst instead of
// "flat index -1".
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/KernelCall.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attnc;

namespace {
HostTensor tensorOf(std::vector<double> values) {
  HostTensor t(ElementType::f32, {int64_t(values.size())});
  t.data = std::move(values);
  return t;
}
constexpr Tolerance kTol{2e-5, 2e-6};
} // namespace

TEST(Compare, NanWhereTheReferenceHasNanMatches) {
  Comparison c = compareTensors(tensorOf({1.0, NAN, -INFINITY}),
                                tensorOf({1.0, NAN, -INFINITY}), kTol);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.worst, -1);
}

TEST(Compare, NanAgainstANumberIsOffAndNamed) {
  Comparison c = compareTensors(tensorOf({1.0, NAN, 2.0}), tensorOf({1.0, 3.0, 2.0}), kTol);
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, 1);
}

TEST(Compare, OnlyNonFiniteMismatchesStillNameTheWorst) {
  Comparison c = compareTensors(tensorOf({1.0, INFINITY, 2.0}),
                                tensorOf({1.0, -INFINITY, NAN}), kTol);
  EXPECT_EQ(c.bad, 2);
  EXPECT_EQ(c.worst, 1);
}

TEST(Compare, TheLargestFiniteErrorIsTheWorst) {
  Comparison c = compareTensors(tensorOf({1.0, 2.5, 3.1}), tensorOf({1.0, 2.0, 3.0}), kTol);
  EXPECT_EQ(c.bad, 2);
  EXPECT_EQ(c.worst, 1);
}
