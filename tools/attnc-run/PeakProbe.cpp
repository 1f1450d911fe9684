//===- PeakProbe.cpp - the machine's f32 FMA peak -------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Twelve independent accumulators hide the FMA latency (4 cycles) on two FMA
// ports; the loop body is nothing but FMAs, so FLOPs / time is the peak the
// kernels are measured against.
//
//===----------------------------------------------------------------------===//

#include "PeakProbe.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

constexpr long kIterations = 20'000'000;
constexpr int kChains = 12;

__attribute__((target("avx512f"))) float chainsAvx512(float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ps(seed + c);
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

__attribute__((target("avx2,fma"))) float chainsAvx2(float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(seed + c);
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  alignas(32) float lanes[8];
  float sum = 0;
  for (int c = 0; c < kChains; ++c) {
    _mm256_store_ps(lanes, acc[c]);
    for (float x : lanes)
      sum += x;
  }
  return sum;
}

} // namespace

double attnc::measureFmaPeakGflops(int threads) {
  bool avx512 = __builtin_cpu_supports("avx512f");
  int lanes = avx512 ? 16 : 8;
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { sink[t] = avx512 ? chainsAvx512(t) : chainsAvx2(t); });
    for (std::thread &th : pool)
      th.join();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double flops = 2.0 * lanes * kChains * double(kIterations) * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}
