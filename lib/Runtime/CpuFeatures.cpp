//===- CpuFeatures.cpp - what this CPU runs, for launch checks and dispatch ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A kernel built for AVX-512 and called on a CPU without it would die of
// SIGILL in its first vector instruction; instead attnc_rt_launch compares
// the descriptor's cpu_needs with what cpuid reports (and what the OS saves
// on a context switch: AVX state in XCR0 bits 1-2, AVX-512 in bits 5-7) and
// refuses with ATTNC_ERR_CPU. Multi-target objects pick their variant from
// the same bits.
//
//===----------------------------------------------------------------------===//

#include "CpuFeatures.h"

#include "attnc/Runtime/attnc_runtime.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

using namespace attnc::rt;

namespace {

struct FeatureName {
  uint64_t bit;
  const char *name;
};

constexpr FeatureName kNames[] = {
    {ATTNC_CPU_AVX2, "avx2"},         {ATTNC_CPU_FMA, "fma"},
    {ATTNC_CPU_BMI2, "bmi2"},         {ATTNC_CPU_F16C, "f16c"},
    {ATTNC_CPU_AVX512F, "avx512f"},   {ATTNC_CPU_AVX512BW, "avx512bw"},
    {ATTNC_CPU_AVX512CD, "avx512cd"}, {ATTNC_CPU_AVX512DQ, "avx512dq"},
    {ATTNC_CPU_AVX512VL, "avx512vl"}, {ATTNC_CPU_AVX512BF16, "avx512bf16"},
    {ATTNC_CPU_SVE256, "sve256"},     {ATTNC_CPU_SVE512, "sve512"},
};

#if defined(__x86_64__) || defined(__i386__)
uint64_t detect() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  bool osxsave = c & (1u << 27), avx = c & (1u << 28);
  uint64_t f = 0;
  if (c & (1u << 12))
    f |= ATTNC_CPU_FMA;
  if (c & (1u << 29))
    f |= ATTNC_CPU_F16C;
  uint64_t xcr0 = 0;
  if (osxsave) {
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (uint64_t(hi) << 32) | lo;
  }
  bool ymm = avx && (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  if (!ymm)
    f &= ~uint64_t(ATTNC_CPU_FMA | ATTNC_CPU_F16C); // VEX-encoded: need AVX state
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return f;
  if (ymm && (b & (1u << 5)))
    f |= ATTNC_CPU_AVX2;
  if (b & (1u << 8))
    f |= ATTNC_CPU_BMI2;
  if (zmm) {
    const struct { unsigned bit; uint64_t feature; } avx512[] = {
        {16, ATTNC_CPU_AVX512F},  {17, ATTNC_CPU_AVX512DQ}, {28, ATTNC_CPU_AVX512CD},
        {30, ATTNC_CPU_AVX512BW}, {31, ATTNC_CPU_AVX512VL}};
    for (auto [bit, feature] : avx512)
      if (b & (1u << bit))
        f |= feature;
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
      f |= ATTNC_CPU_AVX512BF16;
  }
  return f;
}
#elif defined(__aarch64__)
/// SVE code built for a fixed vector length runs on CPUs with at least that
/// length (fixed-length SVE is predicated to it).
uint64_t detect() {
  if (!(getauxval(AT_HWCAP) & HWCAP_SVE))
    return 0;
  int vl = prctl(PR_SVE_GET_VL);
  if (vl < 0)
    return 0;
  int bits = (vl & PR_SVE_VL_LEN_MASK) * 8;
  return (bits >= 256 ? ATTNC_CPU_SVE256 : 0) | (bits >= 512 ? ATTNC_CPU_SVE512 : 0);
}
#else
uint64_t detect() { return 0; }
#endif

/// What the CPU has, from ATTNC_CPU_FEATURES's list or the CPU itself, and the names in the
/// list that are no feature attnc knows ("none" and empty items name nothing).
struct Features {
  uint64_t bits = 0;
  std::string unknown;
};

Features fromEnvironmentOrCpu() {
  const char *list = std::getenv("ATTNC_CPU_FEATURES");
  if (!list)
    return {detect(), ""};
  Features f;
  std::string text(list);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    std::string name = text.substr(start, end == std::string::npos ? std::string::npos
                                                                    : end - start);
    bool known = name.empty() || name == "none";
    for (const FeatureName &n : kNames)
      if (name == n.name)
        f.bits |= n.bit, known = true;
    if (!known)
      f.unknown += (f.unknown.empty() ? "'" : ", '") + name + "'";
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  // Never more than the CPU has: the variable describes a smaller CPU.
  f.bits &= detect();
  return f;
}

const Features &features() {
  static const Features f = fromEnvironmentOrCpu();
  return f;
}

} // namespace

uint64_t attnc::rt::cpuFeatures() { return features().bits; }

std::string attnc::rt::cpuFeaturesError() {
  if (features().unknown.empty())
    return "";
  return "ATTNC_CPU_FEATURES names " + features().unknown + ", which attnc does not know; " +
         "it takes a comma-separated list of " + featureNames(~uint64_t(0)) + ", or none";
}

std::string attnc::rt::featureNames(uint64_t mask) {
  std::string names;
  for (const FeatureName &n : kNames)
    if (mask & n.bit)
      names += (names.empty() ? "" : ", ") + std::string(n.name);
  return names;
}
