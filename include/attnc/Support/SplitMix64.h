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
// The steps are written once, over an integer vocabulary `Ops`, because the
// same hash is both evaluated (on uint64_t) and emitted as IR (BigBird's
// random blocks in a kernel); a second spelling of the constants could drift.
// `Ops` provides `Int`, `c(int64_t)`, `add`, `mul` (both wrapping mod 2^64)
// and `xorShr(x, s)` = x ^ (x >>> s), a logical shift.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_SPLITMIX64_H
#define ATTNC_SUPPORT_SPLITMIX64_H

#include <cstdint>

namespace attnc {

/// splitmix64's finalizer applied to `x` plus the golden-ratio increment: a
/// counter-based generator, value i of stream `seed` is splitmix64(seed + i).
/// The constants are passed through int64_t because IR emitters build signed
/// `index` constants; the bits, and so the wrapping arithmetic, are the same.
template <typename Ops>
typename Ops::Int splitmix64(Ops &ops, typename Ops::Int x) {
  x = ops.add(x, ops.c(int64_t(0x9e3779b97f4a7c15ULL)));
  x = ops.mul(ops.xorShr(x, 30), ops.c(int64_t(0xbf58476d1ce4e5b9ULL)));
  x = ops.mul(ops.xorShr(x, 27), ops.c(int64_t(0x94d049bb133111ebULL)));
  return ops.xorShr(x, 31);
}

/// The vocabulary on plain unsigned integers.
struct SplitMix64Ops {
  using Int = uint64_t;
  Int c(int64_t v) { return uint64_t(v); }
  Int add(Int a, Int b) { return a + b; }
  Int mul(Int a, Int b) { return a * b; }
  Int xorShr(Int a, int s) { return a ^ (a >> s); }
};

inline uint64_t splitmix64(uint64_t x) {
  SplitMix64Ops ops;
  return splitmix64(ops, x);
}

} // namespace attnc

#endif // ATTNC_SUPPORT_SPLITMIX64_H
