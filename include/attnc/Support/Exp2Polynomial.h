//===- Exp2Polynomial.h - 2^f on [-1/2, 1/2] for the softmax ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The polynomials both CPU backends (the MLIR lowering's ExpNonPositive and
// the Halide algorithm) evaluate for 2^f, f = t - round(t), in the exp of the
// online softmax: one table, so the two backends cannot drift apart.
//
// Near-minimax fits on [-1/2, 1/2] (relative error weighted, Chebyshev
// nodes), highest degree first. The constant term is exactly 1: exp(0) = 1 is
// what the running max's own element and an unchanged max (alpha)
// exponentiate, and alpha's error would compound over the KV tiles (a first
// fit with 1 + 1.2e-7 there drifted lse by 8.6e-6 at seq 8192).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_EXP2POLYNOMIAL_H
#define ATTNC_SUPPORT_EXP2POLYNOMIAL_H

namespace attnc::exp2poly {

/// Degree 5: relative error 1.9e-7 at most on the interval, f32 Horner
/// evaluation included.
inline constexpr float kF32[] = {1.321920775808394e-3f, 9.671698324382305e-3f,
                                 5.550891160964966e-2f, 2.4022237956523895e-1f,
                                 6.931468844413757e-1f, 1.0f};

/// Degree 3: relative error 1.0e-4, 1/39 of bf16's rounding step, for values
/// about to be rounded to bf16; two FMAs fewer.
inline constexpr float kBf16[] = {5.500893294811249e-2f, 2.422109693288803e-1f,
                                  6.932829022407532e-1f, 1.0f};

} // namespace attnc::exp2poly

#endif // ATTNC_SUPPORT_EXP2POLYNOMIAL_H
