//===- TileClassifier.cpp - full / partial / empty tiles of a mask --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `Classifier<E>` holds the rules; E is either IntEmitter (evaluates now) or
// IREmitter (emits arith / scf / memref ops). Both provide the same small
// vocabulary: constants, + - *, floor division by a positive constant, signed
// comparisons, boolean logic, and a loop that folds a predicate over a 2-d
// range of blocks into (all kept, any kept).
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/TileClassifier.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Evaluates on int64_t / bool.
struct IntEmitter {
  using Int = int64_t;
  using Bool = bool;
  Int c(int64_t v) { return v; }
  Bool t(bool v) { return v; }
  Int add(Int a, Int b) { return a + b; }
  Int sub(Int a, Int b) { return a - b; }
  Int mul(Int a, Int b) { return a * b; }
  Int floorDiv(Int a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }
  Int min(Int a, Int b) { return std::min(a, b); }
  Bool lt(Int a, Int b) { return a < b; }
  Bool le(Int a, Int b) { return a <= b; }
  Bool eq(Int a, Int b) { return a == b; }
  Bool land(Bool a, Bool b) { return a && b; }
  Bool lor(Bool a, Bool b) { return a || b; }
  Bool lnot(Bool a) { return !a; }
  /// Unsigned 64-bit hashing steps (wrapping).
  Int xorShr(Int a, int s) { return int64_t(uint64_t(a) ^ (uint64_t(a) >> s)); }
  Int remU(Int a, Int b) { return int64_t(uint64_t(a) % uint64_t(b)); }
  Bool lookup(ArrayRef<bool> table, Int index) { return table[index]; }

  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, Fn keep) {
    bool all = true, any = false;
    for (Int qb = qLo; qb <= qHi; ++qb)
      for (Int kb = kLo; kb <= kHi; ++kb) {
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

/// Emits ops on `index` values and i1.
struct IREmitter {
  using Int = Value;
  using Bool = Value;
  OpBuilder &b;
  Location loc;
  ModuleOp module; // holds the block-layout tables

  Int c(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Bool t(bool v) { return b.create<arith::ConstantIntOp>(loc, v, 1); }
  Int add(Int x, Int y) { return b.create<arith::AddIOp>(loc, x, y); }
  Int sub(Int x, Int y) { return b.create<arith::SubIOp>(loc, x, y); }
  Int mul(Int x, Int y) { return b.create<arith::MulIOp>(loc, x, y); }
  Int floorDiv(Int x, int64_t d) {
    return b.create<arith::FloorDivSIOp>(loc, x, c(d));
  }
  Int min(Int x, Int y) { return b.create<arith::MinSIOp>(loc, x, y); }
  Bool cmp(arith::CmpIPredicate p, Int x, Int y) {
    return b.create<arith::CmpIOp>(loc, p, x, y);
  }
  Bool lt(Int x, Int y) { return cmp(arith::CmpIPredicate::slt, x, y); }
  Bool le(Int x, Int y) { return cmp(arith::CmpIPredicate::sle, x, y); }
  Bool eq(Int x, Int y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Bool land(Bool x, Bool y) { return b.create<arith::AndIOp>(loc, x, y); }
  Bool lor(Bool x, Bool y) { return b.create<arith::OrIOp>(loc, x, y); }
  Bool lnot(Bool x) { return b.create<arith::XOrIOp>(loc, x, t(true)); }
  Int xorShr(Int x, int s) {
    return b.create<arith::XOrIOp>(loc, x, b.create<arith::ShRUIOp>(loc, x, c(s)));
  }
  Int remU(Int x, Int y) { return b.create<arith::RemUIOp>(loc, x, y); }

  /// A constant i8 table in a private memref.global, one per distinct table.
  Bool lookup(ArrayRef<bool> table, Int index) {
    auto type = MemRefType::get({int64_t(table.size())}, b.getI8Type());
    SmallVector<int8_t> bytes(table.begin(), table.end());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI8Type()), ArrayRef(bytes));
    // One private constant per distinct table, named by order of creation so
    // the same spec always gives the same object.
    std::string name;
    int count = 0;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      if (!global.getSymName().starts_with("attn_block_layout_"))
        continue;
      ++count;
      if (global.getInitialValueAttr() == init)
        name = global.getSymName().str();
    }
    if (name.empty()) {
      name = "attn_block_layout_" + std::to_string(count);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      b.create<memref::GlobalOp>(loc, name, b.getStringAttr("private"), type,
                                 init, /*constant=*/true, /*alignment=*/nullptr);
    }
    Value global = b.create<memref::GetGlobalOp>(loc, type, name);
    Value byte = b.create<memref::LoadOp>(loc, global, index);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, byte,
                                   b.create<arith::ConstantIntOp>(loc, 0, 8));
  }

  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, Fn keep) {
    Value one = c(1);
    auto outer = b.create<scf::ForOp>(
        loc, qLo, add(qHi, one), one, ValueRange{t(true), t(false)},
        [&](OpBuilder &ob, Location, Value qb, ValueRange acc) {
          IREmitter oe{ob, loc, module};
          auto inner = ob.create<scf::ForOp>(
              loc, kLo, oe.add(kHi, oe.c(1)), oe.c(1), acc,
              [&](OpBuilder &ib, Location, Value kb, ValueRange acc2) {
                IREmitter ie{ib, loc, module};
                Value k = keep(ie, qb, kb);
                ib.create<scf::YieldOp>(
                    loc, ValueRange{ie.land(acc2[0], k), ie.lor(acc2[1], k)});
              });
          ob.create<scf::YieldOp>(loc, inner.getResults());
        });
    return {outer.getResult(0), outer.getResult(1)};
  }
  template <typename Fn> Bool anyOf(int64_t n, Fn fn) {
    Value any = t(false);
    for (int64_t r = 0; r < n; ++r) // n is a small static count (random blocks)
      any = lor(any, fn(r));
    return any;
  }
};

/// The rules. `E` is one of the emitters above.
template <typename E> class Classifier {
  using Int = typename E::Int;
  using Bool = typename E::Bool;

public:
  explicit Classifier(E &e) : e(e) {}

  /// (isFull, isEmpty) of a tile for the mask attribute alone.
  std::pair<Bool, Bool> classify(Attribute mask, const TileBounds<Int> &t) {
    if (isa<FullMaskAttr>(mask))
      return {e.t(true), e.t(false)};
    if (auto window = dyn_cast<SlidingWindowMaskAttr>(mask))
      return classifyWindow(window, t);
    if (auto causal = dyn_cast<CausalMaskAttr>(mask))
      return classifyWindow(
          SlidingWindowMaskAttr::get(mask.getContext(), kUnbounded, 0,
                                     causal.getAlignment()),
          t);
    if (auto conj = dyn_cast<AndMaskAttr>(mask))
      return compose(conj.getMasks(), t, /*isAnd=*/true);
    if (auto disj = dyn_cast<OrMaskAttr>(mask))
      return compose(disj.getMasks(), t, /*isAnd=*/false);
    return classifyBlocks(mask, t);
  }

private:
  /// Row i keeps [i + off - left, i + off + right]; these intervals slide by
  /// one per row, so the tile is full when the last row's left edge and the
  /// first row's right edge enclose [k0, k1), and empty when the union
  /// [q0 + off - left, q1 - 1 + off + right] misses it.
  std::pair<Bool, Bool> classifyWindow(SlidingWindowMaskAttr w,
                                       const TileBounds<Int> &t) {
    Int off = w.getAlignment() == Alignment::bottom_right ? e.sub(t.seqKv, t.seqQ)
                                                          : e.c(0);
    Int lastQ = e.add(e.sub(t.q1, e.c(1)), off), firstQ = e.add(t.q0, off);
    Int lastK = e.sub(t.k1, e.c(1));
    Bool full = e.t(true), empty = e.t(false);
    if (!w.isLeftUnbounded()) {
      Int left = e.c(w.getLeft());
      full = e.land(full, e.le(e.sub(lastQ, left), t.k0));
      empty = e.lor(empty, e.lt(lastK, e.sub(firstQ, left)));
    }
    if (!w.isRightUnbounded()) {
      Int right = e.c(w.getRight());
      full = e.land(full, e.le(lastK, e.add(firstQ, right)));
      empty = e.lor(empty, e.lt(e.add(lastQ, right), t.k0));
    }
    return {full, empty};
  }

  std::pair<Bool, Bool> compose(ArrayRef<Attribute> masks,
                                const TileBounds<Int> &t, bool isAnd) {
    auto [full, empty] = classify(masks.front(), t);
    for (Attribute mask : masks.drop_front()) {
      auto [f, em] = classify(mask, t);
      full = isAnd ? e.land(full, f) : e.lor(full, f);
      empty = isAnd ? e.lor(empty, em) : e.land(empty, em);
    }
    return {full, empty};
  }

  /// Block-pattern masks are constant on blocks: fold the block predicate over
  /// the blocks the tile touches.
  std::pair<Bool, Bool> classifyBlocks(Attribute mask, const TileBounds<Int> &t) {
    auto [bq, bk] = blockSizes(mask);
    auto [all, any] = e.foldBlocks(
        e.floorDiv(t.q0, bq), e.floorDiv(e.sub(t.q1, e.c(1)), bq),
        e.floorDiv(t.k0, bk), e.floorDiv(e.sub(t.k1, e.c(1)), bk),
        [&](auto &inner, Int qb, Int kb) {
          return Classifier<std::remove_reference_t<decltype(inner)>>(inner)
              .blockKeeps(mask, qb, kb, t.seqKv);
        });
    return {all, e.lnot(any)};
  }

  static std::pair<int64_t, int64_t> blockSizes(Attribute mask) {
    if (auto bs = dyn_cast<BlockSparseMaskAttr>(mask))
      return {bs.getBlockQ(), bs.getBlockKv()};
    if (auto lf = dyn_cast<LongformerMaskAttr>(mask))
      return {lf.getBlock(), lf.getBlock()};
    auto bb = cast<BigBirdMaskAttr>(mask);
    return {bb.getBlock(), bb.getBlock()};
  }

  Bool inBand(Int qb, Int kb, int64_t window) {
    Int w = e.c(window);
    return e.land(e.le(e.sub(qb, kb), w), e.le(e.sub(kb, qb), w));
  }

  template <typename> friend class Classifier;

  Bool blockKeeps(Attribute mask, Int qb, Int kb, Int seqKv) {
    if (auto bs = dyn_cast<BlockSparseMaskAttr>(mask)) {
      Int rows = e.c(bs.getNumQBlocks()), cols = e.c(bs.getNumKvBlocks());
      Bool inside = e.land(e.lt(qb, rows), e.lt(kb, cols));
      // Clamp so the lookup stays in bounds; `inside` decides.
      Int index = e.add(e.mul(e.min(qb, e.sub(rows, e.c(1))), cols),
                        e.min(kb, e.sub(cols, e.c(1))));
      return e.land(inside, e.lookup(bs.getLayout(), index));
    }
    if (auto lf = dyn_cast<LongformerMaskAttr>(mask)) {
      Bool keep = inBand(qb, kb, lf.getWindow());
      for (int64_t g : lf.getGlobal())
        keep = e.lor(keep, e.lor(e.eq(qb, e.c(g)), e.eq(kb, e.c(g))));
      return keep;
    }
    auto bb = cast<BigBirdMaskAttr>(mask);
    Int global = e.c(bb.getGlobal());
    Bool keep = e.lor(inBand(qb, kb, bb.getWindow()),
                      e.lor(e.lt(qb, global), e.lt(kb, global)));
    Int numKvBlocks = e.floorDiv(e.add(seqKv, e.c(bb.getBlock() - 1)), bb.getBlock());
    Bool random = e.anyOf(bb.getRandom(), [&](int64_t r) {
      // splitmix64(seed + qb * random + r), as in BigBirdMaskAttr::isKept.
      Int x = e.add(e.c(int64_t(bb.getSeed() + 0x9e3779b97f4a7c15ULL)),
                    e.add(e.mul(qb, e.c(bb.getRandom())), e.c(r)));
      x = e.mul(e.xorShr(x, 30), e.c(int64_t(0xbf58476d1ce4e5b9ULL)));
      x = e.mul(e.xorShr(x, 27), e.c(int64_t(0x94d049bb133111ebULL)));
      return e.eq(e.remU(e.xorShr(x, 31), numKvBlocks), kb);
    });
    return e.lor(keep, random);
  }

  E &e;
};

} // namespace

TileClass mlir::attn::classifyTile(Attribute mask, bool hasMaskMod,
                                   const TileBounds<int64_t> &tile) {
  IntEmitter e;
  auto [full, empty] = Classifier<IntEmitter>(e).classify(mask, tile);
  if (empty)
    return TileClass::empty;
  return full && !hasMaskMod ? TileClass::full : TileClass::partial;
}

bool mlir::attn::maskKeeps(Attribute mask, int64_t q, int64_t kv, int64_t seqQ,
                           int64_t seqKv) {
  return classifyTile(mask, false, {q, q + 1, kv, kv + 1, seqQ, seqKv}) ==
         TileClass::full;
}

int64_t mlir::attn::countKeptPairs(Attribute mask, int64_t seqQ, int64_t seqKv) {
  constexpr int64_t kTile = 64;
  int64_t kept = 0;
  for (int64_t q0 = 0; q0 < seqQ; q0 += kTile)
    for (int64_t k0 = 0; k0 < seqKv; k0 += kTile) {
      int64_t q1 = std::min(seqQ, q0 + kTile), k1 = std::min(seqKv, k0 + kTile);
      TileClass c = classifyTile(mask, false, {q0, q1, k0, k1, seqQ, seqKv});
      if (c == TileClass::full)
        kept += (q1 - q0) * (k1 - k0);
      for (int64_t q = q0; c == TileClass::partial && q < q1; ++q)
        for (int64_t kv = k0; kv < k1; ++kv)
          kept += maskKeeps(mask, q, kv, seqQ, seqKv);
    }
  return kept;
}

std::pair<Value, Value>
mlir::attn::emitTileClass(OpBuilder &b, Location loc, ModuleOp module,
                          Attribute mask, bool hasMaskMod,
                          const TileBounds<Value> &tile) {
  IREmitter e{b, loc, module};
  auto [full, empty] = Classifier<IREmitter>(e).classify(mask, tile);
  if (hasMaskMod)
    full = e.t(false);
  return {full, empty};
}

Value mlir::attn::emitMaskKeeps(OpBuilder &b, Location loc, ModuleOp module,
                                Attribute mask, Value q, Value kv, Value seqQ,
                                Value seqKv) {
  IREmitter e{b, loc, module};
  TileBounds<Value> t{q, e.add(q, e.c(1)), kv, e.add(kv, e.c(1)), seqQ, seqKv};
  return Classifier<IREmitter>(e).classify(mask, t).first;
}
