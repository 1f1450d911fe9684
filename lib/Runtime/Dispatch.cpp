//===- Dispatch.cpp - multi-target kernels: the variant for this CPU ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `attnc --target=x86-64-avx512,x86-64-avx2,x86-64` compiles a kernel once
// per target into one object whose exported entry calls attnc_rt_dispatch
// with its variants, best first (the table attnc writes). The choice depends
// only on the CPU and on ATTNC_TARGET, so it is the same for every call.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CpuFeatures.h"
#include "Describe.h"

#include <cstdlib>
#include <cstring>

#define ATTNC_RT_EXPORT __attribute__((visibility("default")))

using namespace attnc::rt;

static std::string variantList(const attnc_variant *variants, int32_t count) {
  std::string list;
  for (int32_t i = 0; i < count; ++i)
    list += (i ? ", " : "") + std::string(variants[i].target);
  return list;
}

extern "C" ATTNC_RT_EXPORT const attnc_variant *
attnc_rt_select_variant(const attnc_variant *variants, int32_t count, const char *kernel) {
  static const char *forced = std::getenv("ATTNC_TARGET");
  if (forced && *forced) {
    for (int32_t i = 0; i < count; ++i)
      if (!std::strcmp(variants[i].target, forced))
        return &variants[i]; // its launch checks the CPU
    setLastError(cat("kernel '", kernel, "': ATTNC_TARGET=", forced,
                     " names none of its variants (", variantList(variants, count), ")"));
    return nullptr;
  }
  if (std::string bad = cpuFeaturesError(); !bad.empty()) {
    setLastError(cat("kernel '", kernel, "': ", bad));
    return nullptr;
  }
  uint64_t have = cpuFeatures();
  for (int32_t i = 0; i < count; ++i)
    if ((uint64_t(variants[i].cpu_needs) & ~have) == 0)
      return &variants[i];
  setLastError(cat("kernel '", kernel, "' has no variant for this CPU (it has: ",
                   featureNames(have).empty() ? "none of avx2, avx512f, ..."
                                              : featureNames(have),
                   "); its variants: ", variantList(variants, count),
                   "; add a target this CPU runs, e.g. x86-64"));
  return nullptr;
}

extern "C" ATTNC_RT_EXPORT int
attnc_rt_dispatch(const attnc_variant *variants, int32_t count, const char *kernel,
                  const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out,
                  DLTensor *lse, const attnc_options *opt) {
  try {
    const attnc_variant *chosen = attnc_rt_select_variant(variants, count, kernel);
    if (!chosen)
      return ATTNC_ERR_CPU;
    return chosen->entry(q, k, v, out, lse, opt);
  } catch (...) {
    setLastError("attnc_rt_dispatch: internal error");
    return ATTNC_ERR_KERNEL;
  }
}
