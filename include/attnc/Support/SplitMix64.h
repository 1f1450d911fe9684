//===- SplitMix64.h - the one hash attnc uses for seeded choices -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// splitmix64 (Steele, Lea, Flood 2014): stateless and identical on every
// machine, so BigBird's random blocks and attnc-run's seeded inputs can be
// reproduced anywhere, including in NumPy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_SPLITMIX64_H
#define ATTNC_SUPPORT_SPLITMIX64_H

#include <cstdint>

namespace attnc {

/// splitmix64's finalizer applied to `x` plus the golden-ratio increment: a
/// counter-based generator, value i of stream `seed` is splitmix64(seed + i).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace attnc

#endif // ATTNC_SUPPORT_SPLITMIX64_H
