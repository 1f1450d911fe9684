//===- CpuFeatures.h - what this CPU runs, for launch checks and dispatch -===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CPUFEATURES_H
#define ATTNC_LIB_RUNTIME_CPUFEATURES_H

#include <cstdint>
#include <string>

namespace attnc::rt {

/// attnc_cpu_features(): detected once, or ATTNC_CPU_FEATURES's list.
uint64_t cpuFeatures();

/// Why ATTNC_CPU_FEATURES cannot be used (it names features attnc does not know), or "".
std::string cpuFeaturesError();

/// "avx512f, avx512bw" for the attnc_cpu_feature bits of `mask`.
std::string featureNames(uint64_t mask);

/// Sets attnc_last_error() of the calling thread (Launch.cpp owns it).
void setLastError(const std::string &message);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_CPUFEATURES_H
