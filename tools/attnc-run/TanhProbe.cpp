//===- TanhProbe.cpp - the additive kernels' tanh roofline ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One step per chain and iteration, as the kernel's inner loop does it: x =
// k + q (here x += a small step, which keeps the compiler from hoisting the
// rest), tanh|x| = (1 - t) / (1 + t) with t = 2^(-2 |x| log2 e) (clamp,
// round, degree-5 polynomial, 2^n by exponent bits or vscalefps), the sign
// copied back, acc += v_d tanh. Four independent chains (the most that stay in
// registers: more spill and measured no faster) hide the divide's
// and the polynomial's latency; nothing is loaded, so the rate is the
// arithmetic's bound on any additive kernel.
//
//===----------------------------------------------------------------------===//

#include "TanhProbe.h"

#include "PeakProbe.h"

#include "attnc/Support/Exp2Polynomial.h"

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr long kIterations = 2'000'000;
constexpr int kChains = 4;
constexpr float kMinusTwoLog2e = -2.88539008177792681f;

__attribute__((target("avx2,fma"))) __m256 tanhAvx2(__m256 x) {
  const __m256 signBit = _mm256_set1_ps(-0.0f), lo = _mm256_set1_ps(-125.0f);
  __m256 t = _mm256_mul_ps(_mm256_andnot_ps(signBit, x), _mm256_set1_ps(kMinusTwoLog2e));
  __m256 below = _mm256_cmp_ps(lo, t, _CMP_GT_OQ);
  t = _mm256_blendv_ps(t, lo, below);
  __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 f = _mm256_sub_ps(t, n);
  __m256 p = _mm256_set1_ps(attnc::exp2poly::kF32[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(attnc::exp2poly::kF32[i]));
  __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 e = _mm256_blendv_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)),
                              _mm256_setzero_ps(), below);
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 r = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  return _mm256_or_ps(r, _mm256_and_ps(signBit, x));
}

__attribute__((target("avx2,fma"))) float chainsAvx2(float seed) {
  __m256 x[kChains], acc[kChains];
  for (int c = 0; c < kChains; ++c) {
    x[c] = _mm256_set1_ps(-1.0f + 0.1f * c + seed);
    acc[c] = _mm256_setzero_ps();
  }
  __m256 step = _mm256_set1_ps(1e-7f), vd = _mm256_set1_ps(0.5f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c) {
      x[c] = _mm256_add_ps(x[c], step);
      acc[c] = _mm256_fmadd_ps(vd, tanhAvx2(x[c]), acc[c]);
    }
  alignas(32) float lanes[8];
  float sum = 0;
  for (int c = 0; c < kChains; ++c) {
    _mm256_store_ps(lanes, acc[c]);
    for (float v : lanes)
      sum += v;
  }
  return sum;
}

__attribute__((target("avx512f"))) __m512 tanhAvx512(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-125.0f);
  __m512 t = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(kMinusTwoLog2e));
  __mmask16 below = _mm512_cmp_ps_mask(lo, t, _CMP_GT_OQ);
  t = _mm512_mask_mov_ps(t, below, lo);
  __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_set1_ps(attnc::exp2poly::kF32[0]);
  for (int i = 1; i < 6; ++i)
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(attnc::exp2poly::kF32[i]));
  __m512 e = _mm512_maskz_mov_ps(~below, _mm512_scalef_ps(p, n));
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 r = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r), sign));
}

__attribute__((target("avx512f"))) float chainsAvx512(float seed) {
  __m512 x[kChains], acc[kChains];
  for (int c = 0; c < kChains; ++c) {
    x[c] = _mm512_set1_ps(-1.0f + 0.1f * c + seed);
    acc[c] = _mm512_setzero_ps();
  }
  __m512 step = _mm512_set1_ps(1e-7f), vd = _mm512_set1_ps(0.5f);
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c) {
      x[c] = _mm512_add_ps(x[c], step);
      acc[c] = _mm512_fmadd_ps(vd, tanhAvx512(x[c]), acc[c]);
    }
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

} // namespace

// The probe's tanh against libm's over [-10, 10]: a probe that computed
// something else would not bound the kernels' tanh. The vector calls stay
// inside the target-attributed functions (passing __m256 out of them would
// change the ABI).
constexpr int kCheckPoints = 2048;

float checkInput(int i) { return -10.0f + 0.01f * float(i); }

bool closeToLibm(const float *y) {
  for (int i = 0; i < kCheckPoints; ++i)
    if (std::fabs(y[i] - std::tanh(double(checkInput(i)))) > 1e-6)
      return false;
  return true;
}

__attribute__((target("avx2,fma"))) bool matchesLibmAvx2() {
  alignas(32) float y[kCheckPoints];
  for (int i = 0; i < kCheckPoints; i += 8) {
    __m256 x = _mm256_setr_ps(checkInput(i), checkInput(i + 1), checkInput(i + 2),
                              checkInput(i + 3), checkInput(i + 4), checkInput(i + 5),
                              checkInput(i + 6), checkInput(i + 7));
    _mm256_store_ps(y + i, tanhAvx2(x));
  }
  return closeToLibm(y);
}

__attribute__((target("avx512f"))) bool matchesLibmAvx512() {
  alignas(64) float x[16], y[kCheckPoints];
  for (int i = 0; i < kCheckPoints; i += 16) {
    for (int l = 0; l < 16; ++l)
      x[l] = checkInput(i + l);
    _mm512_store_ps(y + i, tanhAvx512(_mm512_load_ps(x)));
  }
  return closeToLibm(y);
}

double attnc::measureTanhStepsPerSecond(int threads) {
  bool avx512 = __builtin_cpu_supports("avx512f");
  if (!(avx512 ? matchesLibmAvx512() : matchesLibmAvx2()))
    return 0;
  return bestRate(threads, double(avx512 ? 16 : 8) * kChains * double(kIterations),
                  [avx512](float t) {
                    return avx512 ? chainsAvx512(t * 1e-3f) : chainsAvx2(t * 1e-3f);
                  });
}
