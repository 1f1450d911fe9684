//===- HalideGrid.h - the Halide GPU adapter's codes ------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_HALIDEGRID_H
#define ATTNC_LIB_RUNTIME_HALIDEGRID_H

#include <cstdint>
#include <string>

namespace attnc::rt {

/// attnc_rt_halide_grid's codes besides Halide's own (negative) ones.
constexpr int32_t kGridTooLarge = 2; // a length or stride beyond int32
/// Nothing ran: no CUDA driver, device or context, or tensors the kernel
/// cannot take (the detail says which).
constexpr int32_t kGridNoDevice = 4;
constexpr int32_t kGridLaunchFailed = 5; // a driver call of the launch failed

/// What a grid function's code means, with the driver's words for the
/// calling thread's last kGridNoDevice.
std::string gridFailure(int32_t code);

/// Records the reason of a kGridNoDevice on this thread.
void setGridFailureDetail(const std::string &detail);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_HALIDEGRID_H
