//===- PeakProbe.h - the machine's f32 FMA peak -----------------*- C++ -*-===//
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

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H
