//===- MaskRules.h - mask semantics, stated once, without MLIR --*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one statement of what every attn mask keeps. A mask is plain data
// (`Mask`); its meaning is the tile rule `Classifier<E>`, which says whether a
// (query tile, key tile) rectangle is kept entirely, partly or not at all.
// Whether one position is kept is the same rule on a 1 x 1 tile, so the
// per-element answer (reference evaluator, pictures) and the per-tile answer
// (kernels, `attnc explain`) cannot disagree.
//
// The rules are written against an emitter E of index arithmetic so that one
// text serves both evaluation now (IntEmitter below) and code generation for
// run-time lengths (the MLIR emitter in lib/Transforms/TileClassifier.cpp; a
// Halide generator would bring its own). E provides:
//   Int, Bool                      value types (signed 64-bit, boolean)
//   c(int64_t), t(bool)            constants
//   add, sub, mul                  wrapping mod 2^64
//   floorDiv(Int, int64_t d > 0), min, max, lt, le, eq  (signed)
//   land, lor, lnot
//   xorShr(Int, int s), remU       unsigned steps for the BigBird hash
//   lookup(const std::vector<bool> &, Int i)   a constant table
//   foldBlocks(qLo, qHi, kLo, kHi, bq, bk, keep) -> (all, any) of
//     keep(E&, qb, kb) over the inclusive block range of blocks bq x bk; keep
//     may get a different E instance (a loop body's builder), so it takes the
//     emitter as an argument. An emitter that cannot loop may unroll over the
//     most blocks a tile can touch, or answer (all, any) = (false, true),
//     "partial": always safe, the tile is then evaluated element by element
//   anyOf(int64_t n, fn)           fn(r) for a small static n, or-ed
//
// This header needs only the C++ standard library, so a generator that must
// not link MLIR can include it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_SUPPORT_MASKRULES_H
#define ATTNC_SUPPORT_MASKRULES_H

#include "attnc/Support/SplitMix64.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace attnc::mask {

/// A window bound meaning "no bound" (the dialect's `inf`).
inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

//===----------------------------------------------------------------------===//
// The mask as plain data
//===----------------------------------------------------------------------===//

struct Full {};

/// Row i keeps [i + off - left, i + off + right], off = seqKv - seqQ when
/// aligned bottom-right, else 0. Causal is {kUnbounded, 0}.
struct Window {
  int64_t left = kUnbounded;
  int64_t right = kUnbounded;
  bool bottomRight = false;
};

/// Block (i / blockQ, j / blockKv) of a row-major layout; blocks outside the
/// layout are dropped.
struct BlockSparse {
  int64_t blockQ = 1, blockKv = 1, numKvBlocks = 1;
  std::vector<bool> layout;
  int64_t numQBlocks() const { return int64_t(layout.size()) / numKvBlocks; }
};

/// Blocks within `window` of the diagonal, plus global rows and columns.
struct Longformer {
  int64_t block = 1, window = 0;
  std::vector<int64_t> global;
};

/// Band, the first `global` block rows and columns, and `random` seeded draws
/// per block row: splitmix64(seed + qb * random + r) mod ceil(seqKv / block).
struct BigBird {
  int64_t block = 1, window = 0, global = 0, random = 0;
  uint64_t seed = 0;
};

struct Mask;
/// Kept where every operand keeps (no operands: everything).
struct And {
  std::vector<Mask> masks;
};
/// Kept where any operand keeps (no operands: nothing).
struct Or {
  std::vector<Mask> masks;
};

struct Mask {
  std::variant<Full, Window, BlockSparse, Longformer, BigBird, And, Or> rule;
};

inline Mask causal(bool bottomRight) {
  return {Window{kUnbounded, 0, bottomRight}};
}

/// The operands of an `and` / `or`, or null for any other mask.
inline const std::vector<Mask> *composedOperands(const Mask &m) {
  if (auto *conj = std::get_if<And>(&m.rule))
    return &conj->masks;
  if (auto *disj = std::get_if<Or>(&m.rule))
    return &disj->masks;
  return nullptr;
}

/// Whether keeps are pure index arithmetic (windows, full, and their and /
/// or), so they can be evaluated on vectors of positions; block patterns look
/// up tables and loop over blocks.
inline bool isArithmeticOnly(const Mask &m) {
  if (std::holds_alternative<Full>(m.rule) || std::holds_alternative<Window>(m.rule))
    return true;
  const std::vector<Mask> *operands = composedOperands(m);
  return operands && std::all_of(operands->begin(), operands->end(), isArithmeticOnly);
}

/// The lengths past which a mask keeps nothing because of a block layout;
/// kernels and the reference reject longer sequences (the layout is the
/// problem's size). A block_sparse covers its layout, an `and` the least of
/// its operands' covers, an `or` the most (bounded only when every operand
/// is), any other mask nothing (kUnbounded). Per dimension: rows past `q`
/// keep no key, keys past `kv` are kept by no row. The normalizer's
/// rewrites (an `or` of equal masks is that mask) keep the cover.
struct LengthCover {
  int64_t q = kUnbounded, kv = kUnbounded;
};

inline LengthCover layoutCover(const Mask &m) {
  if (auto *blocks = std::get_if<BlockSparse>(&m.rule))
    return {blocks->numQBlocks() * blocks->blockQ, blocks->numKvBlocks * blocks->blockKv};
  auto *disj = std::get_if<Or>(&m.rule);
  const std::vector<Mask> *operands = composedOperands(m);
  if (!operands || operands->empty())
    return {};
  LengthCover cover = disj ? LengthCover{0, 0} : LengthCover{};
  for (const Mask &operand : *operands) {
    LengthCover c = layoutCover(operand);
    cover.q = disj ? std::max(cover.q, c.q) : std::min(cover.q, c.q);
    cover.kv = disj ? std::max(cover.kv, c.kv) : std::min(cover.kv, c.kv);
  }
  return cover;
}

//===----------------------------------------------------------------------===//
// The rules
//===----------------------------------------------------------------------===//

enum class TileClass { empty, partial, full };

/// A tile: query rows [q0, q1) and key rows [k0, k1), both non-empty and
/// already clipped to the sequence lengths.
template <typename Int> struct TileBounds { Int q0, q1, k0, k1, seqQ, seqKv; };

template <typename E> class Classifier {
public:
  using Int = typename E::Int;
  using Bool = typename E::Bool;

  explicit Classifier(E &e) : e(e) {}

  /// (isFull, isEmpty) of a tile for the mask alone.
  std::pair<Bool, Bool> classify(const Mask &m, const TileBounds<Int> &t) {
    if (std::holds_alternative<Full>(m.rule))
      return {e.t(true), e.t(false)};
    if (auto *w = std::get_if<Window>(&m.rule))
      return classifyWindow(*w, t);
    if (const std::vector<Mask> *operands = composedOperands(m))
      return compose(*operands, t, /*isAnd=*/std::holds_alternative<And>(m.rule));
    return classifyBlocks(m, t);
  }

  /// Keys [lo, hi) outside which rows [q0, q1) of the tile keep nothing: exact
  /// hulls for windows (and their and / or), all of [0, seqKv) for block
  /// patterns. May reach outside [0, seqKv); callers clip. A kernel loops over
  /// the KV tiles of this range only, so a window costs O(window) per query
  /// tile, not O(seq_kv). Bounds past kRangeLimit count as unbounded, so the
  /// arithmetic cannot overflow (no sequence is that long).
  std::pair<Int, Int> keyRange(const Mask &m, const TileBounds<Int> &t) {
    if (auto *w = std::get_if<Window>(&m.rule)) {
      Int off = w->bottomRight ? e.sub(t.seqKv, t.seqQ) : e.c(0);
      Int lo = w->left >= kRangeLimit ? e.c(0) : e.sub(e.add(t.q0, off), e.c(w->left));
      Int hi = w->right >= kRangeLimit
                   ? t.seqKv
                   : e.add(e.add(t.q1, off), e.c(w->right)); // (q1 - 1) + off + right + 1
      return {lo, hi};
    }
    const std::vector<Mask> *operands = composedOperands(m);
    if (!operands || operands->empty())
      return {e.c(0), t.seqKv};
    bool conj = std::holds_alternative<And>(m.rule);
    auto [lo, hi] = keyRange(operands->front(), t);
    for (size_t i = 1; i < operands->size(); ++i) {
      auto [l, h] = keyRange((*operands)[i], t);
      lo = conj ? e.max(lo, l) : e.min(lo, l);
      hi = conj ? e.min(hi, h) : e.max(hi, h);
    }
    return {lo, hi};
  }

private:
  static constexpr int64_t kRangeLimit = int64_t(1) << 48;

  template <typename> friend class Classifier;

  /// Rows' intervals slide by one per row, so the tile is full when the last
  /// row's left edge and the first row's right edge enclose [k0, k1), and
  /// empty when the union [firstQ - left, lastQ + right] misses it. Bounds are
  /// compared as differences of positions so that a huge finite `left` or
  /// `right` cannot overflow.
  std::pair<Bool, Bool> classifyWindow(const Window &w,
                                       const TileBounds<Int> &t) {
    Int off = w.bottomRight ? e.sub(t.seqKv, t.seqQ) : e.c(0);
    Int firstQ = e.add(t.q0, off), lastQ = e.add(e.sub(t.q1, e.c(1)), off);
    Int lastK = e.sub(t.k1, e.c(1));
    Bool full = e.t(true), empty = e.t(false);
    if (w.left != kUnbounded) {
      Int left = e.c(w.left);
      full = e.land(full, e.le(e.sub(lastQ, t.k0), left));
      empty = e.lor(empty, e.lt(left, e.sub(firstQ, lastK)));
    }
    if (w.right != kUnbounded) {
      Int right = e.c(w.right);
      full = e.land(full, e.le(e.sub(lastK, firstQ), right));
      empty = e.lor(empty, e.lt(right, e.sub(t.k0, lastQ)));
    }
    return {full, empty};
  }

  /// `and` is full exactly when every operand is, and empty when any operand
  /// is; `or` the reverse. Operands that are each partial yet disjoint (or
  /// together covering) make the tile partial although it is empty (full):
  /// safe, since a partial tile is evaluated element by element. On a 1 x 1
  /// tile no operand is partial, so isKept below is exact.
  std::pair<Bool, Bool> compose(const std::vector<Mask> &masks,
                                const TileBounds<Int> &t, bool isAnd) {
    if (masks.empty())
      return {e.t(isAnd), e.t(!isAnd)};
    auto [full, empty] = classify(masks.front(), t);
    for (size_t i = 1; i < masks.size(); ++i) {
      auto [f, em] = classify(masks[i], t);
      full = isAnd ? e.land(full, f) : e.lor(full, f);
      empty = isAnd ? e.lor(empty, em) : e.land(empty, em);
    }
    return {full, empty};
  }

  /// Block-pattern masks are constant on blocks: fold the block predicate over
  /// the blocks the tile touches.
  std::pair<Bool, Bool> classifyBlocks(const Mask &m,
                                       const TileBounds<Int> &t) {
    auto [bq, bk] = blockSizes(m);
    auto [all, any] = e.foldBlocks(
        e.floorDiv(t.q0, bq), e.floorDiv(e.sub(t.q1, e.c(1)), bq),
        e.floorDiv(t.k0, bk), e.floorDiv(e.sub(t.k1, e.c(1)), bk), bq, bk,
        [&](auto &inner, auto qb, auto kb) {
          return Classifier<std::remove_reference_t<decltype(inner)>>(inner)
              .blockKeeps(m, qb, kb, t.seqKv);
        });
    return {all, e.lnot(any)};
  }

  static std::pair<int64_t, int64_t> blockSizes(const Mask &m) {
    if (auto *bs = std::get_if<BlockSparse>(&m.rule))
      return {bs->blockQ, bs->blockKv};
    if (auto *lf = std::get_if<Longformer>(&m.rule))
      return {lf->block, lf->block};
    const auto &bb = std::get<BigBird>(m.rule);
    return {bb.block, bb.block};
  }

  Bool inBand(Int qb, Int kb, int64_t window) {
    Int w = e.c(window);
    return e.land(e.le(e.sub(qb, kb), w), e.le(e.sub(kb, qb), w));
  }

  Bool blockKeeps(const Mask &m, Int qb, Int kb, Int seqKv) {
    if (auto *bs = std::get_if<BlockSparse>(&m.rule)) {
      Int rows = e.c(bs->numQBlocks()), cols = e.c(bs->numKvBlocks);
      Bool inside = e.land(e.lt(qb, rows), e.lt(kb, cols));
      // Clamp so the lookup stays in bounds; `inside` decides.
      Int index = e.add(e.mul(e.min(qb, e.sub(rows, e.c(1))), cols),
                        e.min(kb, e.sub(cols, e.c(1))));
      return e.land(inside, e.lookup(bs->layout, index));
    }
    if (auto *lf = std::get_if<Longformer>(&m.rule)) {
      Bool keep = inBand(qb, kb, lf->window);
      for (int64_t g : lf->global)
        keep = e.lor(keep, e.lor(e.eq(qb, e.c(g)), e.eq(kb, e.c(g))));
      return keep;
    }
    const auto &bb = std::get<BigBird>(m.rule);
    Int global = e.c(bb.global);
    Bool keep = e.lor(inBand(qb, kb, bb.window),
                      e.lor(e.lt(qb, global), e.lt(kb, global)));
    Int numKvBlocks = e.floorDiv(e.add(seqKv, e.c(bb.block - 1)), bb.block);
    Bool random = e.anyOf(bb.random, [&](int64_t r) {
      Int x = e.add(e.c(int64_t(bb.seed)),
                    e.add(e.mul(qb, e.c(bb.random)), e.c(r)));
      return e.eq(e.remU(splitmix64(e, x), numKvBlocks), kb);
    });
    return e.lor(keep, random);
  }

  E &e;
};

//===----------------------------------------------------------------------===//
// Evaluation on integers
//===----------------------------------------------------------------------===//

/// Evaluates now. Arithmetic wraps through uint64_t, as index arithmetic in
/// the emitted code does, so the hash is defined behaviour.
struct IntEmitter {
  using Int = int64_t;
  using Bool = bool;
  Int c(int64_t v) { return v; }
  Bool t(bool v) { return v; }
  Int add(Int a, Int b) { return int64_t(uint64_t(a) + uint64_t(b)); }
  Int sub(Int a, Int b) { return int64_t(uint64_t(a) - uint64_t(b)); }
  Int mul(Int a, Int b) { return int64_t(uint64_t(a) * uint64_t(b)); }
  Int floorDiv(Int a, int64_t d) { return a / d - (a % d < 0 ? 1 : 0); }
  Int min(Int a, Int b) { return std::min(a, b); }
  Int max(Int a, Int b) { return std::max(a, b); }
  Bool lt(Int a, Int b) { return a < b; }
  Bool le(Int a, Int b) { return a <= b; }
  Bool eq(Int a, Int b) { return a == b; }
  Bool land(Bool a, Bool b) { return a && b; }
  Bool lor(Bool a, Bool b) { return a || b; }
  Bool lnot(Bool a) { return !a; }
  Int xorShr(Int a, int s) { return int64_t(uint64_t(a) ^ (uint64_t(a) >> s)); }
  Int remU(Int a, Int b) { return int64_t(uint64_t(a) % uint64_t(b)); }
  Bool lookup(const std::vector<bool> &table, Int i) {
    return table[size_t(i)];
  }

  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, int64_t,
                                   int64_t, Fn keep) {
    bool all = true, any = false;
    // Stop once the answer is partial: nothing later can change it.
    for (Int qb = qLo; qb <= qHi && (all || !any); ++qb)
      for (Int kb = kLo; kb <= kHi && (all || !any); ++kb) {
        bool k = keep(*this, qb, kb);
        all &= k;
        any |= k;
      }
    return {all, any};
  }
  template <typename Fn> Bool anyOf(int64_t n, Fn fn) {
    for (int64_t r = 0; r < n; ++r)
      if (fn(r))
        return true;
    return false;
  }
};

/// Tile class for concrete lengths; a mask_mod can only drop positions, so it
/// turns full into partial.
inline TileClass classifyTile(const Mask &m, bool hasMaskMod,
                              const TileBounds<int64_t> &tile) {
  IntEmitter e;
  auto [full, empty] = Classifier<IntEmitter>(e).classify(m, tile);
  if (empty)
    return TileClass::empty;
  return full && !hasMaskMod ? TileClass::full : TileClass::partial;
}

/// Whether the mask keeps (q, kv): the 1 x 1 tile is full.
inline bool isKept(const Mask &m, int64_t q, int64_t kv, int64_t seqQ,
                   int64_t seqKv) {
  return classifyTile(m, false, {q, q + 1, kv, kv + 1, seqQ, seqKv}) ==
         TileClass::full;
}

/// (q, kv) pairs kept for these lengths: whole tiles where they are full or
/// empty, element by element only inside partial tiles.
inline int64_t countKeptPairs(const Mask &m, int64_t seqQ, int64_t seqKv) {
  constexpr int64_t kTile = 64;
  int64_t kept = 0;
  for (int64_t q0 = 0; q0 < seqQ; q0 += kTile)
    for (int64_t k0 = 0; k0 < seqKv; k0 += kTile) {
      int64_t q1 = std::min(seqQ, q0 + kTile), k1 = std::min(seqKv, k0 + kTile);
      TileClass c = classifyTile(m, false, {q0, q1, k0, k1, seqQ, seqKv});
      if (c == TileClass::full)
        kept += (q1 - q0) * (k1 - k0);
      for (int64_t q = q0; c == TileClass::partial && q < q1; ++q)
        for (int64_t kv = k0; kv < k1; ++kv)
          kept += isKept(m, q, kv, seqQ, seqKv);
    }
  return kept;
}

} // namespace attnc::mask

#endif // ATTNC_SUPPORT_MASKRULES_H
