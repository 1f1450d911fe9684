//===- PeakProbe.cpp - the machine's f32 FMA and bf16 dot-product peaks ---===//
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
// The bf16 probe is the same with AVX512-BF16's vdpbf16ps (acc += a0*b0 +
// a1*b1 per f32 lane, from bf16 pairs): 16 lanes x 2 products x (multiply +
// add) = 64 FLOPs per zmm instruction. Its latency is longer than an FMA's
// (5-6 cycles on the CPUs that have it), so it gets more chains.
//
//===----------------------------------------------------------------------===//

#include "PeakProbe.h"

#include <immintrin.h>

namespace {

constexpr long kIterations = 20'000'000;
constexpr int kChains = 12;
constexpr int kBf16Chains = 16;

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

__attribute__((target("avx512bf16,avx512f"))) float chainsBf16(float seed) {
  __m512 acc[kBf16Chains];
  for (int c = 0; c < kBf16Chains; ++c)
    acc[c] = _mm512_set1_ps(seed + c);
  // Small operands: 2 * 2^-10 * 2^-10 per lane and step keeps the sums finite.
  __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0x1p-10f), _mm512_set1_ps(0x1p-10f));
  __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(-0x1p-10f), _mm512_set1_ps(0x1p-10f));
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kBf16Chains; ++c)
      acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  float sum = 0;
  for (int c = 0; c < kBf16Chains; ++c)
    sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

} // namespace

bool attnc::hasBf16Dot() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
}

double attnc::measureBf16DotPeakGflops(int threads) {
  if (!hasBf16Dot())
    return 0;
  return attnc::bestRate(threads, 64.0 * kBf16Chains * double(kIterations), chainsBf16);
}

double attnc::measureFmaPeakGflops(int threads) {
  bool avx512 = __builtin_cpu_supports("avx512f");
  int lanes = avx512 ? 16 : 8;
  return attnc::bestRate(threads, 2.0 * lanes * kChains * double(kIterations),
                    [avx512](float seed) { return avx512 ? chainsAvx512(seed) : chainsAvx2(seed); });
}
