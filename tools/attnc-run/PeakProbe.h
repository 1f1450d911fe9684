//===- PeakProbe.h - the machine's f32 FMA and bf16 dot peaks ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H
#define ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H

namespace attnc {

/// Measured f32 GFLOPS of independent FMA chains in the widest vectors the CPU
/// has (AVX-512, else AVX2), on `threads` threads at once; best of a few runs.
double measureFmaPeakGflops(int threads);

/// Whether the CPU has AVX512-BF16 (vdpbf16ps), which the bf16 probe needs.
bool hasBf16Dot();

/// Measured GFLOPS of independent vdpbf16ps chains (zmm: 16 f32 lanes, each
/// adding two bf16 products, 64 FLOPs per instruction) on `threads` threads at
/// once; best of a few runs. 0 when the CPU has no AVX512-BF16 (hasBf16Dot).
double measureBf16DotPeakGflops(int threads);

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H
