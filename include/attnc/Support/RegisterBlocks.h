//===- RegisterBlocks.h - the CPU kernels' register blocks ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The register blocks of the Q K^T and P V loops, from the target's vector
// register count: one rule for both CPU backends (the MLIR lowering through
// CpuTarget, the Halide schedule through HalideTarget), so that they and the
// automatic block_q derived from them cannot drift apart. No dependencies:
// the Halide library, with its own LLVM, includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_REGISTERBLOCKS_H
#define ATTNC_SUPPORT_REGISTERBLOCKS_H

#include <algorithm>
#include <cstdint>

namespace attnc {

struct RegisterBlocks {
  int64_t qkKeys, qkRowVectors; // Q K^T: keys x row vectors accumulators
  int64_t pvRows, pvVectors;    // P V: rows x vectors of head_dim accumulators
};

/// With the vectors each step loads and one broadcast, the accumulators must
/// fit the registers: Q K^T 4 x 4 + 5 of 32, 4 x 3 + 4 of 16; P V 4 x 4 + 5
/// of 32, 6 x 2 + 3 of 16. 12 accumulators, not 8, on 16 registers: two FMA
/// pipes of latency 4 need 8 in flight, and with 8 any stall costs (Zen 3,
/// AVX2: 2 x 4 ran the loops at about 79% of peak, the kernel at 50-68%).
constexpr RegisterBlocks registerBlocks(int64_t vectorRegisters) {
  return vectorRegisters >= 32 ? RegisterBlocks{4, 4, 4, 4} : RegisterBlocks{4, 3, 6, 2};
}

/// Reduction steps per iteration of the Q K^T (head_dim) and P V (keys)
/// loops, the `unroll` tunable's automatic value: 2 with AVX2's 8 lanes and 16
/// registers (Zen 3, interleaved: the MLIR kernels 1.02-1.08x over 1 step on
/// dense head_dim 64 and 128, 1 and 2 threads, 4 steps no better; the Halide
/// ones 1.11x at head_dim 64, even at 128); 1 elsewhere, unmeasured.
constexpr int64_t reductionUnroll(int64_t vectorWidth, int64_t vectorRegisters) {
  return vectorWidth == 8 && vectorRegisters == 16 ? 2 : 1;
}

/// The largest d <= limit dividing n (n, limit >= 1): a block capped to what
/// a tile holds.
inline int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  int64_t d = std::min(n, limit);
  while (n % d != 0)
    --d;
  return d;
}

} // namespace attnc

#endif // ATTNC_SUPPORT_REGISTERBLOCKS_H
