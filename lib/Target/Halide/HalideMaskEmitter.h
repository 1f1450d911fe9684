//===- HalideMaskEmitter.h - MaskRules' vocabulary as Halide Exprs -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The emitter attnc::mask::Classifier runs on for the Halide backend: Int is a
// 64-bit Halide Expr (signed, or unsigned inside the BigBird hash), Bool a
// boolean one. The rules are the ones every other
// backend uses; only their spelling is Halide's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_HALIDE_HALIDEMASKEMITTER_H
#define ATTNC_LIB_TARGET_HALIDE_HALIDEMASKEMITTER_H

#include "Halide.h"
#include "attnc/Support/MaskRules.h"

namespace attnc::halide {

struct HalideMaskEmitter {
  using Int = Halide::Expr;
  using Bool = Halide::Expr;

  /// The most query / key positions a classified rectangle spans (the tile
  /// sizes, or 1 for one element): bounds the blocks foldBlocks unrolls.
  int64_t spanQ = 1, spanKv = 1;

  /// Constants beyond +-2^62 (the BigBird hash's, a huge seed) are unsigned,
  /// and arithmetic with an unsigned operand wraps mod 2^64 (the hash relies on
  /// it; Halide treats signed overflow as undefined). The rest stays signed:
  /// Halide's bounds analysis of reinterpreted unsigned arithmetic mis-proved
  /// element masks false, and positions never come near 2^62.
  Int c(int64_t v) {
    constexpr int64_t kSignedLimit = int64_t(1) << 62;
    if (v > -kSignedLimit && v < kSignedLimit)
      return Halide::Expr(v);
    return Halide::Internal::make_const(Halide::UInt(64), uint64_t(v));
  }
  Bool t(bool v) {
    return v ? Halide::Internal::const_true() : Halide::Internal::const_false();
  }
  static bool isU(const Halide::Expr &x) { return x.type().is_uint(); }
  static Halide::Expr u(Int x) { return isU(x) ? x : Halide::reinterpret(Halide::UInt(64), x); }
  static Int s(Int x) { return isU(x) ? Halide::reinterpret(Halide::Int(64), x) : x; }
  Int add(Int x, Int y) { return isU(x) || isU(y) ? u(x) + u(y) : x + y; }
  Int sub(Int x, Int y) { return isU(x) || isU(y) ? u(x) - u(y) : x - y; }
  Int mul(Int x, Int y) { return isU(x) || isU(y) ? u(x) * u(y) : x * y; }
  Int floorDiv(Int x, int64_t d) { return s(x) / c(d); } // Halide rounds to -inf
  Int min(Int x, Int y) { return Halide::min(s(x), s(y)); }
  Int max(Int x, Int y) { return Halide::max(s(x), s(y)); }
  Bool lt(Int x, Int y) { return s(x) < s(y); }
  Bool le(Int x, Int y) { return s(x) <= s(y); }
  Bool eq(Int x, Int y) { return s(x) == s(y); }
  Bool land(Bool x, Bool y) { return x && y; }
  Bool lor(Bool x, Bool y) { return x || y; }
  Bool lnot(Bool x) { return !x; }
  Int xorShr(Int x, int sh) { return u(x) ^ (u(x) >> sh); }
  /// x mod y < y: back to signed without a reinterpret.
  Int remU(Int x, Int y) { return Halide::cast<int64_t>(u(x) % u(y)); }

  /// A constant table, embedded in the object. The index is clamped so that
  /// bounds inference sees a fixed region; callers keep it in range anyway.
  Bool lookup(const std::vector<bool> &table, Int index) {
    Halide::Buffer<uint8_t> buffer(static_cast<int>(table.size()));
    for (size_t n = 0; n < table.size(); ++n)
      buffer(static_cast<int>(n)) = table[n];
    Halide::Expr at = Halide::clamp(Halide::cast<int32_t>(s(index)), 0,
                                    static_cast<int>(table.size()) - 1);
    return buffer(at) != 0;
  }

  /// Unrolled over the most blocks a span can touch, each guarded by the
  /// run-time range; past kMaxBlocks, "partial" (exact element by element;
  /// such tiles are never skipped).
  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, int64_t bq,
                                   int64_t bk, Fn keep) {
    constexpr int64_t kMaxBlocks = 16;
    // n positions touch at most ceil((n - 1) / b) + 1 blocks of b.
    int64_t nq = (spanQ + bq - 2) / bq + 1, nk = (spanKv + bk - 2) / bk + 1;
    if (nq * nk > kMaxBlocks)
      return {t(false), t(true)}; // (all, any): some kept, some not
    Bool all = t(true), any = t(false);
    for (int64_t a = 0; a < nq; ++a)
      for (int64_t b = 0; b < nk; ++b) {
        Int qb = add(qLo, c(a)), kb = add(kLo, c(b));
        Bool inside = land(le(qb, qHi), le(kb, kHi));
        Bool k = keep(*this, qb, kb);
        all = land(all, lor(lnot(inside), k));
        any = lor(any, land(inside, k));
      }
    return {all, any};
  }
  template <typename Fn> Bool anyOf(int64_t n, Fn fn) {
    Bool any = t(false);
    for (int64_t r = 0; r < n; ++r)
      any = lor(any, fn(r));
    return any;
  }
};

} // namespace attnc::halide

#endif // ATTNC_LIB_TARGET_HALIDE_HALIDEMASKEMITTER_H
