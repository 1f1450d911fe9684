//===- TanhProbe.h - the additive kernels' tanh roofline ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_TANHPROBE_H
#define ATTNC_TOOLS_ATTNC_RUN_TANHPROBE_H

namespace attnc {

/// Measured billions of additive-score steps a second, acc += v_d tanh(k + q),
/// from registers in the widest vectors the CPU has, on `threads` threads at
/// once; best of a few runs. Each step is the instruction sequence the MLIR
/// CPU kernels emit for one (pair, d) element (FlashAdditive.cpp, the exp2 of
/// ExpNonPositive.cpp), so it bounds additive attention's pairs x head_dim a
/// second as the FMA peak bounds dot-product attention's FLOPs. 0 when the
/// probe's tanh is not libm's within 1e-6 (then it would bound nothing).
double measureTanhStepsPerSecond(int threads);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_TANHPROBE_H
