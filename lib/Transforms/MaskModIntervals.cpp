//===- MaskModIntervals.cpp - a mask_mod over a whole tile ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each integer value gets the signed bounds it can take over the tile, in its
// own width; an i1 gets [0, 0] (false), [1, 1] (true) or [0, 1]. Bounds are
// computed in 128 bits and widen to "any value" where the op may wrap.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/MaskModIntervals.h"

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace attnc;

namespace {

using Wide = __int128;

/// The values an integer can take; `any`: every value of its type (also what
/// floats get: the analysis does not follow them).
struct Bounds {
  bool any = true;
  Wide lo = 0, hi = 0;

  static Bounds top() { return {}; }
  static Bounds of(Wide lo, Wide hi) { return {false, lo, hi}; }
  static Bounds boolean(bool canBeFalse, bool canBeTrue) {
    return of(canBeFalse ? 0 : 1, canBeTrue ? 1 : 0);
  }
  bool exact() const { return !any && lo == hi; }
  bool nonNegative() const { return !any && lo >= 0; }
  bool contains(Wide v) const { return any || (lo <= v && v <= hi); }
};

unsigned widthOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

Wide minOf(unsigned w) { return -(Wide(1) << (w - 1)); }
Wide maxOf(unsigned w) { return (Wide(1) << (w - 1)) - 1; }

/// [lo, hi] if every value fits the signed range of width w, else any value.
Bounds fit(Wide lo, Wide hi, unsigned w) {
  if (w == 1)
    return Bounds::boolean(true, true);
  return lo >= minOf(w) && hi <= maxOf(w) ? Bounds::of(lo, hi) : Bounds::top();
}

/// The smallest and largest of f over the corners of a x b: the bounds of an
/// op monotone in each operand (add, sub, mul, division by a sign-fixed range).
template <typename F> Bounds corners(const Bounds &a, const Bounds &b, unsigned w, F f) {
  Wide v[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
  return fit(*std::min_element(v, v + 4), *std::max_element(v, v + 4), w);
}

Wide floorDiv(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
Wide ceilDiv(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// The truth of `pred` over a x b: [1, 1] where it holds for every pair,
/// [0, 0] where for none.
Bounds compare(arith::CmpIPredicate pred, const Bounds &a, const Bounds &b) {
  using P = arith::CmpIPredicate;
  if (a.any || b.any)
    return Bounds::boolean(true, true);
  bool isUnsigned = pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
  if (isUnsigned && !(a.nonNegative() && b.nonNegative()))
    return Bounds::boolean(true, true); // a negative value compares as a large one
  auto lessThan = [](const Bounds &x, const Bounds &y) { // x < y: always, never
    return Bounds::boolean(!(x.hi < y.lo), x.lo < y.hi);
  };
  auto negate = [](Bounds r) { return Bounds::of(1 - r.hi, 1 - r.lo); };
  switch (pred) {
  case P::eq:
    return Bounds::boolean(!(a.exact() && b.exact() && a.lo == b.lo),
                          a.lo <= b.hi && b.lo <= a.hi);
  case P::ne:
    return negate(compare(P::eq, a, b));
  case P::slt:
  case P::ult:
    return lessThan(a, b);
  case P::sge:
  case P::uge:
    return negate(lessThan(a, b));
  case P::sgt:
  case P::ugt:
    return lessThan(b, a);
  case P::sle:
  case P::ule:
    return negate(lessThan(b, a));
  }
  return Bounds::boolean(true, true);
}

/// Remainder with the sign of the dividend (remsi; remui on non-negative
/// ranges): |r| < max |b|, and a dividend within one period of a constant
/// divisor keeps its order.
Bounds remainder(const Bounds &a, const Bounds &b) {
  Wide m = std::max(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi);
  if (b.exact() && a.lo >= 0 && a.lo / m == a.hi / m)
    return Bounds::of(a.lo % m, a.hi % m);
  if (a.lo >= 0)
    return Bounds::of(0, std::min(a.hi, m - 1));
  if (a.hi <= 0)
    return Bounds::of(std::max(a.lo, -(m - 1)), 0);
  return Bounds::of(-(m - 1), m - 1);
}

/// Bitwise and / or / xor: exact on i1; on wider integers bounded where both
/// are non-negative (the result stays below the next power of two).
Bounds bitwise(Operation &op, const Bounds &a, const Bounds &b, unsigned w) {
  if (w == 1) {
    if (isa<arith::AndIOp>(op))
      return Bounds::of(a.lo & b.lo, a.hi & b.hi);
    if (isa<arith::OrIOp>(op))
      return Bounds::of(a.lo | b.lo, a.hi | b.hi);
    return a.exact() && b.exact() ? Bounds::of(a.lo ^ b.lo, a.lo ^ b.lo)
                                  : Bounds::boolean(true, true);
  }
  if (!a.nonNegative() || !b.nonNegative())
    return Bounds::top();
  if (isa<arith::AndIOp>(op))
    return Bounds::of(0, std::min(a.hi, b.hi));
  Wide bound = 1;
  while (bound <= std::max(a.hi, b.hi))
    bound <<= 1;
  return Bounds::of(isa<arith::OrIOp>(op) ? std::max(a.lo, b.lo) : 0, bound - 1);
}

/// A value of width `from` read as unsigned (extui, index_castui).
Bounds zeroExtend(const Bounds &a, unsigned from) {
  if (a.any)
    return from < 64 ? Bounds::of(0, (Wide(1) << from) - 1) : Bounds::top();
  if (from == 1 || a.lo >= 0)
    return a;
  if (from == 64)
    return Bounds::top();
  Wide span = Wide(1) << from;
  return a.hi < 0 ? Bounds::of(a.lo + span, a.hi + span) : Bounds::of(0, span - 1);
}

class Analysis {
public:
  Bounds get(Value v) const {
    auto it = ranges.find(v);
    return it == ranges.end() ? Bounds::top() : it->second;
  }
  void set(Value v, Bounds r) { ranges[v] = r; }
  Bounds eval(Operation &op);
  bool mayTrap = false;
  /// The body reads an input whose values this analysis was not given: its
  /// values, and whether the tile's indices lie inside it, are the launch's.
  bool loads = false;
  const LoadValuesFn *loadValues = nullptr;

private:
  static Bounds castValue(Operation &op, const Bounds &a, unsigned from, unsigned to);
  Bounds loaded(mlir::attn::LoadOp load, unsigned w);
  Bounds divide(Operation &op, const Bounds &a, const Bounds &b, unsigned w);
  llvm::DenseMap<Value, Bounds> ranges;
};

Bounds Analysis::divide(Operation &op, const Bounds &a, const Bounds &b, unsigned w) {
  if (b.contains(0)) { // the tile may divide by zero: an error there, never skipped
    mayTrap = true;
    return Bounds::top();
  }
  bool isUnsigned = isa<arith::DivUIOp, arith::RemUIOp>(op);
  if (a.any || (isUnsigned && !a.nonNegative()) || (isUnsigned && !b.nonNegative()))
    return Bounds::top();
  if (isa<arith::RemSIOp, arith::RemUIOp>(op))
    return remainder(a, b);
  if (a.lo == minOf(w) && b.contains(-1))
    return Bounds::top(); // INT_MIN / -1 wraps
  if (isa<arith::FloorDivSIOp>(op))
    return corners(a, b, w, floorDiv);
  if (isa<arith::CeilDivSIOp>(op))
    return corners(a, b, w, ceilDiv);
  return corners(a, b, w, [](Wide x, Wide y) { return x / y; });
}

/// What a load reads over the box of its indices' bounds: from the inputs'
/// values where given (a box that leaves the input fails there: may trap),
/// else any value of its type.
Bounds Analysis::loaded(mlir::attn::LoadOp load, unsigned w) {
  llvm::SmallVector<IndexRange, 4> box;
  for (Value index : load.getIndices()) {
    Bounds r = get(index);
    if (r.any) {
      mayTrap = true; // an index of any value may leave the input
      return Bounds::of(minOf(w), maxOf(w));
    }
    box.push_back({int64_t(r.lo), int64_t(r.hi)});
  }
  if (!loadValues || !load.getType().isIntOrIndex()) {
    loads = true;
    return load.getType().isIntOrIndex() ? Bounds::of(minOf(w), maxOf(w)) : Bounds::top();
  }
  std::optional<IndexRange> values = (*loadValues)(load.getInput(), box);
  if (!values) {
    mayTrap = true;
    return Bounds::of(minOf(w), maxOf(w));
  }
  return Bounds::of(values->lo, values->hi);
}

/// index_cast, extsi and trunci keep the signed value where it fits;
/// index_castui and extui read it as unsigned; an i1 held as 0 / 1 is -1 / 0
/// signed.
Bounds Analysis::castValue(Operation &op, const Bounds &a, unsigned from, unsigned to) {
  if (to < from) { // truncation: the value where it fits, the low bit for i1
    if (a.any)
      return to == 1 ? Bounds::boolean(true, true) : Bounds::top();
    if (to == 1)
      return a.exact() ? Bounds::of(a.lo & 1, a.lo & 1) : Bounds::boolean(true, true);
    return fit(a.lo, a.hi, to);
  }
  if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op))
    return zeroExtend(a, from);
  if (from == 1 && to > 1) // sign extension of an i1: true is -1
    return a.any ? Bounds::of(-1, 0) : Bounds::of(-a.hi, -a.lo);
  return a;
}

Bounds Analysis::eval(Operation &op) {
  Type type = op.getResult(0).getType();
  if (auto load = dyn_cast<mlir::attn::LoadOp>(op))
    return loaded(load, type.isIntOrIndex() ? widthOf(type) : 64);
  if (!type.isIntOrIndex()) {
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op))
      mayTrap = true;
    return Bounds::top();
  }
  unsigned w = widthOf(type);
  auto in = [&](unsigned i) { return get(op.getOperand(i)); };
  auto operandWidth = [&]() { return widthOf(op.getOperand(0).getType()); };
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    const llvm::APInt &v = cast<IntegerAttr>(c.getValue()).getValue();
    Wide x = w == 1 ? Wide(v.getZExtValue()) : Wide(v.getSExtValue());
    return Bounds::of(x, x);
  }
  if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    mayTrap = true; // a float that does not fit is an error
    return fit(minOf(w), maxOf(w), w);
  }
  if (isa<arith::CmpFOp>(op))
    return Bounds::boolean(true, true);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    Bounds x = in(0), y = in(1);
    if (operandWidth() == 1 && !x.any && !y.any) { // signed: true is -1
      using P = arith::CmpIPredicate;
      P p = cmp.getPredicate();
      if (p == P::slt || p == P::sle || p == P::sgt || p == P::sge) {
        x = Bounds::of(-x.hi, -x.lo);
        y = Bounds::of(-y.hi, -y.lo);
      }
    }
    return compare(cmp.getPredicate(), x, y);
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    Bounds c = in(0), t = in(1), f = in(2);
    if (c.exact())
      return c.lo ? t : f;
    if (t.any || f.any)
      return w == 1 ? Bounds::boolean(true, true) : Bounds::top();
    return Bounds::of(std::min(t.lo, f.lo), std::max(t.hi, f.hi));
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::IndexCastUIOp, arith::ExtUIOp,
          arith::TruncIOp>(op))
    return castValue(op, in(0), operandWidth(), w);
  // Integer arithmetic: any operand of any value makes any value, except as
  // a divisor (where it may be zero). On i1 (whose signed value of true is -1,
  // not the 1 it is held as here) only the logic ops are followed.
  Bounds a = in(0);
  if (w == 1 && !isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp>(op) && in(1).contains(0))
      mayTrap = true;
    return Bounds::boolean(true, true);
  }
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
          arith::FloorDivSIOp, arith::CeilDivSIOp>(op))
    return divide(op, a, in(1), w);
  if (auto abs = dyn_cast<math::AbsIOp>(op)) {
    if (a.any || a.lo == minOf(w))
      return Bounds::top();
    if (a.lo >= 0)
      return a;
    return a.hi <= 0 ? Bounds::of(-a.hi, -a.lo) : Bounds::of(0, std::max(-a.lo, a.hi));
  }
  Bounds b = in(1);
  if (a.any || b.any)
    return w == 1 ? Bounds::boolean(true, true) : Bounds::top();
  return llvm::TypeSwitch<Operation *, Bounds>(&op)
      .Case([&](arith::AddIOp) { return corners(a, b, w, std::plus<Wide>()); })
      .Case([&](arith::SubIOp) { return corners(a, b, w, std::minus<Wide>()); })
      .Case([&](arith::MulIOp) { return corners(a, b, w, std::multiplies<Wide>()); })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(
          [&](auto) { return bitwise(op, a, b, w); })
      .Case<arith::MaxSIOp, arith::MaxUIOp>([&](auto) {
        bool ok = isa<arith::MaxSIOp>(op) || (a.nonNegative() && b.nonNegative());
        return ok ? Bounds::of(std::max(a.lo, b.lo), std::max(a.hi, b.hi)) : Bounds::top();
      })
      .Case<arith::MinSIOp, arith::MinUIOp>([&](auto) {
        bool ok = isa<arith::MinSIOp>(op) || (a.nonNegative() && b.nonNegative());
        return ok ? Bounds::of(std::min(a.lo, b.lo), std::min(a.hi, b.hi)) : Bounds::top();
      })
      .Default([&](Operation *) { return Bounds::top(); });
}

} // namespace

/// Runs the analysis over the tile; `analysis` then holds every value's bounds.
static void analyze(Analysis &analysis, Region &maskMod, IndexRange b, IndexRange h,
                    IndexRange q, IndexRange kv) {
  Block &block = maskMod.front();
  IndexRange args[] = {b, h, q, kv};
  for (auto [arg, range] : llvm::zip(block.getArguments(), args))
    analysis.set(arg, Bounds::of(range.lo, range.hi));
  for (Operation &op : block.without_terminator())
    analysis.set(op.getResult(0), analysis.eval(op));
}

TileVerdict attnc::classifyMaskModTile(Region &maskMod, IndexRange b, IndexRange h,
                                       IndexRange q, IndexRange kv,
                                       const LoadValuesFn &loadValues) {
  Analysis analysis;
  analysis.loadValues = loadValues ? &loadValues : nullptr;
  analyze(analysis, maskMod, b, h, q, kv);
  Bounds kept = analysis.get(maskMod.front().getTerminator()->getOperand(0));
  if (analysis.mayTrap || analysis.loads || kept.any || !kept.exact())
    return TileVerdict::Unknown;
  return kept.lo ? TileVerdict::Always : TileVerdict::Never;
}

bool attnc::boundMaskModValues(Region &maskMod, IndexRange b, IndexRange h, IndexRange q,
                               IndexRange kv, llvm::DenseMap<Value, ValueBounds> &bounds) {
  Analysis analysis;
  analyze(analysis, maskMod, b, h, q, kv);
  auto record = [&](Value v) {
    Bounds r = analysis.get(v);
    bounds[v] = {r.any, int64_t(r.lo), int64_t(r.hi)};
  };
  for (Value arg : maskMod.front().getArguments())
    record(arg);
  for (Operation &op : maskMod.front().without_terminator())
    record(op.getResult(0));
  return !analysis.mayTrap;
}
