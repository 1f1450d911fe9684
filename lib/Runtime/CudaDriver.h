//===- CudaDriver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The few driver calls the runtime makes itself, through dlopen, so that a
// CUDA kernel object links and its argument checks run on a machine without
// a driver; calling it there fails with the loader's message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CUDADRIVER_H
#define ATTNC_LIB_RUNTIME_CUDADRIVER_H

#include <cstdint>
#include <string>

namespace attnc::rt {

/// The primary context of CUDA device `device` (retained once per process
/// and device), or nullptr with `error` set.
void *cudaPrimaryContext(int64_t device, std::string &error);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_CUDADRIVER_H
