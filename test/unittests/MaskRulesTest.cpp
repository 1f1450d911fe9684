//===- MaskRulesTest.cpp - Unit tests for the MLIR-free mask rules --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attnc/Support/MaskRules.h is the only statement of mask semantics, and this
// binary is built without MLIR on its include path, so it also proves the
// header stays usable from a process that does not link MLIR.
//
// Per-element keeps are checked against pictures worked out by hand from the
// dialect's documentation ('1' = kept). Tile classes are then checked against
// those keeps over every tile of several grids, including tile sizes that do
// not divide the lengths: a wrong "full" or "empty" would make a kernel skip
// or drop work, so that direction is checked for every mask; "partial" must
// be exact wherever the rule claims exactness (every mask but and / or).
//
//===----------------------------------------------------------------------===//

#include "attnc/Support/MaskRules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace attnc::mask;

namespace {

/// The mask's keeps as one string per query row.
std::vector<std::string> picture(const Mask &m, int64_t seqQ, int64_t seqKv) {
  std::vector<std::string> rows;
  for (int64_t q = 0; q < seqQ; ++q) {
    std::string row;
    for (int64_t kv = 0; kv < seqKv; ++kv)
      row += isKept(m, q, kv, seqQ, seqKv) ? '1' : '0';
    rows.push_back(row);
  }
  return rows;
}

Mask window(int64_t left, int64_t right, bool bottomRight = false) {
  return {Window{left, right, bottomRight}};
}

Mask blockSparse(int64_t bq, int64_t bkv, int64_t numKvBlocks,
                 std::vector<bool> layout) {
  return {BlockSparse{bq, bkv, numKvBlocks, std::move(layout)}};
}

Mask longformer() { return {Longformer{2, 0, {2}}}; }

/// Block 2, no band beyond the diagonal, one random block per row, seed 42:
/// over 4 key blocks the draws splitmix64(42 + qb) mod 4 are 1, 0, 3, 2
/// (computed with test/numerics/crosscheck.py's independent splitmix64).
Mask bigbird() { return {BigBird{2, 0, 0, 1, 42}}; }

//===----------------------------------------------------------------------===//
// (a) Per-element keeps
//===----------------------------------------------------------------------===//

TEST(MaskRules, SplitMix64KnownValue) {
  // The first output of the reference splitmix64 seeded with 0.
  EXPECT_EQ(attnc::splitmix64(0), 0xe220a8397b1dcdafULL);
}

TEST(MaskRules, Full) {
  EXPECT_EQ(picture({Full{}}, 2, 3), (std::vector<std::string>{"111", "111"}));
}

TEST(MaskRules, CausalTopLeft) {
  EXPECT_EQ(picture(causal(false), 3, 5),
            (std::vector<std::string>{"10000", "11000", "11100"}));
}

TEST(MaskRules, CausalBottomRight) {
  // offset = seq_kv - seq_q = 2: the last query row sees every key.
  EXPECT_EQ(picture(causal(true), 3, 5),
            (std::vector<std::string>{"11100", "11110", "11111"}));
  // Longer queries than keys: the first rows see nothing.
  EXPECT_EQ(picture(causal(true), 4, 2),
            (std::vector<std::string>{"00", "00", "10", "11"}));
}

TEST(MaskRules, SlidingWindow) {
  EXPECT_EQ(picture(window(1, 1), 4, 4),
            (std::vector<std::string>{"1100", "1110", "0111", "0011"}));
  // Mistral-style W = 2, bottom-right: row i keeps [i + 2 - 1, i + 2].
  EXPECT_EQ(picture(window(1, 0, true), 2, 4),
            (std::vector<std::string>{"0110", "0011"}));
  EXPECT_EQ(picture(window(0, kUnbounded), 3, 3),
            (std::vector<std::string>{"111", "011", "001"}));
}

TEST(MaskRules, BlockSparse) {
  // Blocks 2 x 3, diagonal layout; row 4 and column 6 lie outside the layout.
  EXPECT_EQ(picture(blockSparse(2, 3, 2, {1, 0, 0, 1}), 5, 7),
            (std::vector<std::string>{"1110000", "1110000", "0001110",
                                      "0001110", "0000000"}));
}

TEST(MaskRules, Longformer) {
  // Blocks of 2, the diagonal block, and block 2 global in both directions.
  EXPECT_EQ(picture(longformer(), 6, 6),
            (std::vector<std::string>{"110011", "110011", "001111", "001111",
                                      "111111", "111111"}));
}

TEST(MaskRules, BigBird) {
  // Diagonal plus the drawn blocks 1, 0, 3, 2 of rows 0..3.
  EXPECT_EQ(picture(bigbird(), 8, 8),
            (std::vector<std::string>{"11110000", "11110000", "11110000",
                                      "11110000", "00001111", "00001111",
                                      "00001111", "00001111"}));
  // Global block 0 (its rows see everything, its columns are seen by all),
  // over 5 key blocks (seq_kv 9), 2 draws per row with seed 7: block row 1
  // draws key blocks 3 and 1.
  Mask withGlobal{BigBird{2, 0, 1, 2, 7}};
  EXPECT_EQ(picture(withGlobal, 4, 9),
            (std::vector<std::string>{"111111111", "111111111", "111100110",
                                      "111100110"}));
}

TEST(MaskRules, AndOr) {
  Mask band{And{{causal(false), window(1, kUnbounded)}}};
  EXPECT_EQ(picture(band, 4, 4),
            (std::vector<std::string>{"1000", "1100", "0110", "0011"}));
  Mask diagOrBlock{Or{{window(0, 0), blockSparse(2, 2, 2, {0, 1, 0, 0})}}};
  EXPECT_EQ(picture(diagOrBlock, 4, 4),
            (std::vector<std::string>{"1011", "0111", "0010", "0001"}));
  // The identities of the empty compositions.
  EXPECT_TRUE(isKept({And{}}, 0, 0, 1, 1));
  EXPECT_FALSE(isKept({Or{}}, 0, 0, 1, 1));
}

//===----------------------------------------------------------------------===//
// (b) Tile classes agree with the keeps
//===----------------------------------------------------------------------===//

struct Case {
  const char *name;
  Mask mask;
  bool exactPartial; // false for and / or, which may call a tile partial
};

std::vector<Case> cases() {
  return {
      {"full", {Full{}}, true},
      {"causal", causal(false), true},
      {"causal_br", causal(true), true},
      {"window", window(3, 2), true},
      {"window_br", window(5, 0, true), true},
      {"window_right_only", window(kUnbounded, 4, true), true},
      {"block_sparse",
       blockSparse(3, 5, 3, {1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1}), true},
      {"longformer", {Longformer{3, 1, {0, 5}}}, true},
      {"bigbird", {BigBird{4, 1, 1, 2, 1234}}, true},
      {"and", {And{{causal(true), {Longformer{4, 0, {1}}}}}}, false},
      {"or", {Or{{window(2, 0), {BigBird{3, 0, 0, 1, 9}}}}}, false},
      {"or_of_and",
       {Or{{{And{{window(1, 1), blockSparse(2, 2, 2, {1, 1, 0, 1})}}},
            causal(false)}}},
       false},
  };
}

TEST(MaskRules, TileClassAgreesWithKeeps) {
  const std::pair<int64_t, int64_t> lengths[] = {
      {13, 17}, {17, 13}, {16, 16}, {1, 9}, {9, 1}};
  const std::pair<int64_t, int64_t> tiles[] = {{1, 1}, {2, 3},  {4, 4},
                                               {5, 7}, {8, 16}, {64, 64}};
  for (const Case &c : cases())
    for (auto [seqQ, seqKv] : lengths)
      for (auto [tq, tk] : tiles)
        for (int64_t q0 = 0; q0 < seqQ; q0 += tq)
          for (int64_t k0 = 0; k0 < seqKv; k0 += tk) {
            int64_t q1 = std::min(seqQ, q0 + tq), k1 = std::min(seqKv, k0 + tk);
            int64_t kept = 0;
            for (int64_t q = q0; q < q1; ++q)
              for (int64_t kv = k0; kv < k1; ++kv)
                kept += isKept(c.mask, q, kv, seqQ, seqKv);
            int64_t size = (q1 - q0) * (k1 - k0);
            TileBounds<int64_t> t{q0, q1, k0, k1, seqQ, seqKv};
            TileClass cls = classifyTile(c.mask, false, t);
            SCOPED_TRACE(testing::Message()
                         << c.name << " seq " << seqQ << "x" << seqKv
                         << " tile [" << q0 << "," << q1 << ")x[" << k0 << ","
                         << k1 << ")");
            switch (cls) {
            case TileClass::full:
              EXPECT_EQ(kept, size);
              break;
            case TileClass::empty:
              EXPECT_EQ(kept, 0);
              break;
            case TileClass::partial:
              if (c.exactPartial) {
                EXPECT_TRUE(kept > 0 && kept < size) << kept << " of " << size;
              }
              break;
            }
            // A mask_mod may drop any position, so nothing is full any more.
            TileClass withMod = classifyTile(c.mask, true, t);
            EXPECT_EQ(withMod,
                      cls == TileClass::full ? TileClass::partial : cls);
          }
}

// keyRange bounds every key a range of rows keeps (a kernel loops over those
// KV tiles only), and is exact for windows: its ends are kept keys.
TEST(MaskRules, KeyRangeHoldsEveryKeptKey) {
  const std::pair<int64_t, int64_t> lengths[] = {{13, 17}, {17, 13}, {16, 16}, {1, 9}, {9, 1}};
  for (const Case &c : cases())
    for (auto [seqQ, seqKv] : lengths)
      for (int64_t tq : {1, 3, 8})
        for (int64_t q0 = 0; q0 < seqQ; q0 += tq) {
          int64_t q1 = std::min(seqQ, q0 + tq);
          IntEmitter e;
          auto [lo, hi] = Classifier<IntEmitter>(e).keyRange(
              c.mask, TileBounds<int64_t>{q0, q1, 0, seqKv, seqQ, seqKv});
          int64_t first = seqKv, last = -1;
          for (int64_t q = q0; q < q1; ++q)
            for (int64_t kv = 0; kv < seqKv; ++kv)
              if (isKept(c.mask, q, kv, seqQ, seqKv)) {
                first = std::min(first, kv);
                last = std::max(last, kv);
              }
          SCOPED_TRACE(testing::Message() << c.name << " seq " << seqQ << "x" << seqKv
                                          << " rows [" << q0 << "," << q1 << ")");
          if (last < 0)
            continue;
          EXPECT_LE(lo, first);
          EXPECT_GT(hi, last);
          if (std::holds_alternative<Window>(c.mask.rule)) {
            EXPECT_EQ(std::max<int64_t>(lo, 0), first);
            EXPECT_EQ(std::min(hi, seqKv), last + 1);
          }
        }
}

TEST(MaskRules, CountKeptPairs) {
  // Lengths over the 64-wide counting tile, so whole-tile shortcuts are used.
  for (const Case &c : cases()) {
    int64_t seqQ = 100, seqKv = 130, kept = 0;
    for (int64_t q = 0; q < seqQ; ++q)
      for (int64_t kv = 0; kv < seqKv; ++kv)
        kept += isKept(c.mask, q, kv, seqQ, seqKv);
    EXPECT_EQ(countKeptPairs(c.mask, seqQ, seqKv), kept) << c.name;
  }
}

//===----------------------------------------------------------------------===//
// A client's own emitter
//===----------------------------------------------------------------------===//

/// What a generator outside MLIR would write: its own value types (here thin
/// wrappers that would be Halide Exprs there) and the vocabulary over them.
struct WrappedEmitter {
  struct Int {
    int64_t v;
  };
  struct Bool {
    bool v;
  };
  IntEmitter i;
  Int c(int64_t v) { return {v}; }
  Bool t(bool v) { return {v}; }
  Int add(Int a, Int b) { return {i.add(a.v, b.v)}; }
  Int sub(Int a, Int b) { return {i.sub(a.v, b.v)}; }
  Int mul(Int a, Int b) { return {i.mul(a.v, b.v)}; }
  Int floorDiv(Int a, int64_t d) { return {i.floorDiv(a.v, d)}; }
  Int min(Int a, Int b) { return {std::min(a.v, b.v)}; }
  Int max(Int a, Int b) { return {std::max(a.v, b.v)}; }
  Bool lt(Int a, Int b) { return {a.v < b.v}; }
  Bool le(Int a, Int b) { return {a.v <= b.v}; }
  Bool eq(Int a, Int b) { return {a.v == b.v}; }
  Bool land(Bool a, Bool b) { return {a.v && b.v}; }
  Bool lor(Bool a, Bool b) { return {a.v || b.v}; }
  Bool lnot(Bool a) { return {!a.v}; }
  Int xorShr(Int a, int s) { return {i.xorShr(a.v, s)}; }
  Int remU(Int a, Int b) { return {i.remU(a.v, b.v)}; }
  Bool lookup(const std::vector<bool> &table, Int x) { return {table[x.v]}; }
  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, int64_t,
                                   int64_t, Fn keep) {
    Bool all{true}, any{false};
    for (int64_t qb = qLo.v; qb <= qHi.v; ++qb)
      for (int64_t kb = kLo.v; kb <= kHi.v; ++kb) {
        Bool k = keep(*this, Int{qb}, Int{kb});
        all = land(all, k);
        any = lor(any, k);
      }
    return {all, any};
  }
  template <typename Fn> Bool anyOf(int64_t n, Fn fn) {
    Bool any{false};
    for (int64_t r = 0; r < n; ++r)
      any = lor(any, fn(r));
    return any;
  }
};

TEST(MaskRules, OwnEmitterAgreesWithIntEmitter) {
  WrappedEmitter w;
  for (const Case &c : cases())
    for (int64_t q0 = 0; q0 < 20; q0 += 6)
      for (int64_t k0 = 0; k0 < 23; k0 += 5) {
        int64_t q1 = std::min<int64_t>(20, q0 + 6),
                k1 = std::min<int64_t>(23, k0 + 5);
        auto [full, empty] = Classifier<WrappedEmitter>(w).classify(
            c.mask, {{q0}, {q1}, {k0}, {k1}, {20}, {23}});
        TileClass expected =
            classifyTile(c.mask, false, {q0, q1, k0, k1, 20, 23});
        EXPECT_EQ(empty.v, expected == TileClass::empty) << c.name;
        EXPECT_EQ(full.v && !empty.v, expected == TileClass::full) << c.name;
      }
}

} // namespace
