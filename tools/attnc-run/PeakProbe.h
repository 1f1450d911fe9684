//===- PeakProbe.h - the machine's f32 FMA and bf16 dot peaks ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H
#define ATTNC_TOOLS_ATTNC_RUN_PEAKPROBE_H

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace attnc {

/// Best of three runs of `chains(seed)` on `threads` threads at once, each
/// thread doing `workPerThread` (FLOPs, steps): billions a second.
template <typename Chains>
double bestRate(int threads, double workPerThread, Chains chains) {
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sink[t] = chains(float(t)); });
    for (std::thread &th : pool)
      th.join();
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    best = std::max(best, workPerThread * threads / seconds.count() * 1e-9);
  }
  return best;
}

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
