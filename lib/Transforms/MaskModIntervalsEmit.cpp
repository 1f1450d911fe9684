//===- MaskModIntervalsEmit.cpp - mask_mod tile verdicts in the kernel ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// classifyMaskModTile's transfer functions emitted as index arithmetic, for
// tiles whose bounds are run-time values. What the C++ analysis decides with
// widening (overflow, traps, unsigned ops on negative ranges) is decided here
// once, at compile time, on the widest tile a kernel can see: a body that
// passes canEmitMaskModVerdict never overflows, traps or leaves the subset on
// any smaller tile (each transfer function's result only shrinks with its
// operands'), so the emitted code needs no such checks and stays branch-free.
// Integers are (lo, hi) index pairs; an i1 is (can be false, can be true).
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/MaskModIntervals.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/TileClassifier.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace attnc;

namespace {

/// Positions below 2^40 and batch / head indices below 2^31: what the
/// compile-time proof covers, checked at run time before a verdict counts.
constexpr int64_t kPositionLimit = int64_t(1) << 40, kIndexLimit = int64_t(1) << 31;

bool followedType(Type t) {
  return t.isIndex() || t.isInteger(64) || t.isInteger(32) || t.isInteger(1);
}

/// The op's static conditions, on the bounds over the widest tile.
bool followed(Operation &op, const llvm::DenseMap<Value, ValueBounds> &bounds) {
  auto at = [&](Value v) { return bounds.lookup(v); };
  if (!llvm::all_of(op.getOperandTypes(), followedType) ||
      !followedType(op.getResult(0).getType()) || at(op.getResult(0)).any)
    return false;
  auto positiveConstant = [&](Value v) { return at(v).lo == at(v).hi && at(v).lo > 0; };
  bool boolean = op.getResult(0).getType().isInteger(1);
  return llvm::TypeSwitch<Operation *, bool>(&op)
      .Case([&](arith::ConstantOp c) { return isa<IntegerAttr>(c.getValue()); })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::MaxSIOp, arith::MinSIOp>(
          [&](auto) { return !boolean; })
      .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>([&](auto) { return boolean; })
      .Case<arith::SelectOp>([&](auto) { return true; })
      .Case<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp, arith::RemSIOp>(
          [&](auto) { return positiveConstant(op.getOperand(1)); })
      .Case<arith::DivUIOp, arith::RemUIOp>([&](auto) {
        return positiveConstant(op.getOperand(1)) && at(op.getOperand(0)).lo >= 0;
      })
      .Case([&](arith::CmpIOp c) {
        using P = arith::CmpIPredicate;
        P p = c.getPredicate();
        bool isUnsigned = p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
        return !c.getLhs().getType().isInteger(1) &&
               (!isUnsigned || (at(c.getLhs()).lo >= 0 && at(c.getRhs()).lo >= 0));
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp>(
          [&](auto) { return !op.getOperand(0).getType().isInteger(1); })
      .Case([&](mlir::attn::LoadOp) { return true; })
      .Default([&](Operation *) { return false; });
}

struct Ints {
  Value lo, hi;
};
struct Bools {
  Value canBeFalse, canBeTrue;
};

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, LoadRangeFn loadRange)
      : b(b), loc(loc), loadRange(loadRange), inside(flag(true)) {}
  /// Whether every load's box lay inside its input (else no verdict counts).
  Value allInside() const { return inside; }

  void setInts(Value v, Ints r) { ints[v] = r; }
  Bools bools(Value v) { return boolMap.lookup(v); }
  void emit(Operation &op);

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value flag(bool v) { return arith::ConstantIntOp::create(b, loc, v, 1); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value differ(Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y); }
  Value negate(Value x) { return differ(x, flag(true)); }
  Value pick(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }

  Ints in(Value v) { return ints.lookup(v); }
  Bools compare(arith::CmpIPredicate p, Ints x, Ints y);
  Ints remainder(Ints a, Value c);
  Ints divide(Operation &op, Ints a, Value c);
  void select(arith::SelectOp op);

  void load(Operation &op);

  OpBuilder &b;
  Location loc;
  LoadRangeFn loadRange;
  Value inside;
  llvm::DenseMap<Value, Ints> ints;
  llvm::DenseMap<Value, Bools> boolMap;
};

/// As compare() of MaskModIntervals.cpp: eq / ne / less-than and their mirrors.
Bools Emitter::compare(arith::CmpIPredicate p, Ints x, Ints y) {
  using P = arith::CmpIPredicate;
  auto lessThan = [&](Ints l, Ints r) { // (can be false, can be true) of l < r
    return Bools{cmp(P::sge, l.hi, r.lo), cmp(P::slt, l.lo, r.hi)};
  };
  auto swap = [](Bools r) { return Bools{r.canBeTrue, r.canBeFalse}; };
  switch (p) {
  case P::eq:
  case P::ne: {
    Value sameSingle = both(both(cmp(P::eq, x.lo, x.hi), cmp(P::eq, y.lo, y.hi)),
                            cmp(P::eq, x.lo, y.lo));
    Bools eq{negate(sameSingle), both(cmp(P::sle, x.lo, y.hi), cmp(P::sle, y.lo, x.hi))};
    return p == P::eq ? eq : swap(eq);
  }
  case P::slt:
  case P::ult:
    return lessThan(x, y);
  case P::sge:
  case P::uge:
    return swap(lessThan(x, y));
  case P::sgt:
  case P::ugt:
    return lessThan(y, x);
  case P::sle:
  case P::ule:
    return swap(lessThan(y, x));
  }
  return {flag(true), flag(true)};
}

/// As remainder() of MaskModIntervals.cpp, for a positive constant divisor c.
Ints Emitter::remainder(Ints a, Value c) {
  using P = arith::CmpIPredicate;
  Value cMinus1 = sub(c, idx(1));
  Value loNonNegative = cmp(P::sge, a.lo, idx(0));
  Value onePeriod = both(loNonNegative, cmp(P::eq, arith::DivSIOp::create(b, loc, a.lo, c),
                                            arith::DivSIOp::create(b, loc, a.hi, c)));
  Value hiNonPositive = cmp(P::sle, a.hi, idx(0));
  Value lo = pick(loNonNegative, idx(0),
                  pick(hiNonPositive, max(a.lo, sub(idx(0), cMinus1)), sub(idx(0), cMinus1)));
  Value hi = pick(loNonNegative, min(a.hi, cMinus1), pick(hiNonPositive, idx(0), cMinus1));
  return {pick(onePeriod, arith::RemSIOp::create(b, loc, a.lo, c), lo),
          pick(onePeriod, arith::RemSIOp::create(b, loc, a.hi, c), hi)};
}

/// Division by a positive constant: monotone, so the bounds' quotients.
Ints Emitter::divide(Operation &op, Ints a, Value c) {
  if (isa<arith::RemSIOp, arith::RemUIOp>(op))
    return remainder(a, c);
  auto quotient = [&](Value x) -> Value {
    if (isa<arith::FloorDivSIOp>(op))
      return arith::FloorDivSIOp::create(b, loc, x, c);
    if (isa<arith::CeilDivSIOp>(op))
      return arith::CeilDivSIOp::create(b, loc, x, c);
    return arith::DivSIOp::create(b, loc, x, c); // divui: a is non-negative
  };
  return {quotient(a.lo), quotient(a.hi)};
}

void Emitter::select(arith::SelectOp op) {
  Bools c = bools(op.getCondition());
  Value onlyTrue = both(c.canBeTrue, negate(c.canBeFalse));
  Value onlyFalse = both(c.canBeFalse, negate(c.canBeTrue));
  auto choose = [&](Value t, Value f, Value hull) {
    return pick(onlyTrue, t, pick(onlyFalse, f, hull));
  };
  if (op.getType().isInteger(1)) {
    Bools t = bools(op.getTrueValue()), f = bools(op.getFalseValue());
    boolMap[op] = {choose(t.canBeFalse, f.canBeFalse, either(t.canBeFalse, f.canBeFalse)),
                   choose(t.canBeTrue, f.canBeTrue, either(t.canBeTrue, f.canBeTrue))};
    return;
  }
  Ints t = in(op.getTrueValue()), f = in(op.getFalseValue());
  ints[op] = {choose(t.lo, f.lo, min(t.lo, f.lo)), choose(t.hi, f.hi, max(t.hi, f.hi))};
}

/// The loaded values' range over the box of its indices' ranges.
void Emitter::load(Operation &op) {
  if (!loadRange) { // any value: the verdict cannot count
    ints[op.getResult(0)] = {idx(INT32_MIN), idx(INT32_MAX)};
    inside = flag(false);
    return;
  }
  SmallVector<std::pair<Value, Value>> box;
  for (Value index : op.getOperands())
    box.push_back({in(index).lo, in(index).hi});
  LoadRange r = loadRange(&op, box);
  ints[op.getResult(0)] = {r.lo, r.hi};
  inside = both(inside, r.inside);
}

void Emitter::emit(Operation &op) {
  Value result = op.getResult(0);
  if (isa<mlir::attn::LoadOp>(op))
    return load(op);
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    const llvm::APInt &v = cast<IntegerAttr>(c.getValue()).getValue();
    if (result.getType().isInteger(1))
      boolMap[result] = {flag(v.isZero()), flag(!v.isZero())};
    else
      ints[result] = {idx(v.getSExtValue()), idx(v.getSExtValue())};
    return;
  }
  if (auto s = dyn_cast<arith::SelectOp>(op))
    return select(s);
  if (auto c = dyn_cast<arith::CmpIOp>(op)) {
    boolMap[result] = compare(c.getPredicate(), in(c.getLhs()), in(c.getRhs()));
    return;
  }
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op)) {
    Bools x = bools(op.getOperand(0)), y = bools(op.getOperand(1));
    if (isa<arith::AndIOp>(op)) {
      boolMap[result] = {either(x.canBeFalse, y.canBeFalse), both(x.canBeTrue, y.canBeTrue)};
    } else if (isa<arith::OrIOp>(op)) {
      boolMap[result] = {both(x.canBeFalse, y.canBeFalse), either(x.canBeTrue, y.canBeTrue)};
    } else { // exact where both are, else either
      Value exact = both(differ(x.canBeFalse, x.canBeTrue), differ(y.canBeFalse, y.canBeTrue));
      Value value = differ(x.canBeTrue, y.canBeTrue);
      boolMap[result] = {either(negate(exact), negate(value)), either(negate(exact), value)};
    }
    return;
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op)) {
    ints[result] = in(op.getOperand(0));
    return;
  }
  Ints a = in(op.getOperand(0)), y = in(op.getOperand(1));
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
          arith::RemSIOp, arith::RemUIOp>(op)) {
    ints[result] = divide(op, a, y.lo);
    return;
  }
  ints[result] =
      llvm::TypeSwitch<Operation *, Ints>(&op)
          .Case([&](arith::AddIOp) { return Ints{add(a.lo, y.lo), add(a.hi, y.hi)}; })
          .Case([&](arith::SubIOp) { return Ints{sub(a.lo, y.hi), sub(a.hi, y.lo)}; })
          .Case([&](arith::MaxSIOp) { return Ints{max(a.lo, y.lo), max(a.hi, y.hi)}; })
          .Case([&](arith::MinSIOp) { return Ints{min(a.lo, y.lo), min(a.hi, y.hi)}; })
          .Default([&](Operation *) { // muli: the corners
            Value c[] = {mul(a.lo, y.lo), mul(a.lo, y.hi), mul(a.hi, y.lo), mul(a.hi, y.hi)};
            return Ints{min(min(c[0], c[1]), min(c[2], c[3])),
                        max(max(c[0], c[1]), max(c[2], c[3]))};
          });
}

} // namespace

bool attnc::canEmitMaskModVerdict(Region &maskMod) {
  llvm::DenseMap<Value, ValueBounds> bounds;
  IndexRange index{0, kIndexLimit - 1}, position{0, kPositionLimit - 1};
  if (!boundMaskModValues(maskMod, index, index, position, position, bounds))
    return false;
  return llvm::all_of(maskMod.front().without_terminator(),
                      [&](Operation &op) { return followed(op, bounds); });
}

std::pair<Value, Value> attnc::emitMaskModVerdict(OpBuilder &b, Location loc, Region &maskMod,
                                                  Value batch, Value headLo, Value headHi,
                                                  Value q0, Value q1, Value k0, Value k1,
                                                  Value seqQ, Value seqKv,
                                                  LoadRangeFn loadRange) {
  Emitter e(b, loc, loadRange);
  Block &block = maskMod.front();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Ints args[] = {{batch, batch},
                 {headLo, headHi},
                 {q0, arith::SubIOp::create(b, loc, q1, one)},
                 {k0, arith::SubIOp::create(b, loc, k1, one)}};
  for (auto [arg, range] : llvm::zip(block.getArguments(), args))
    e.setInts(arg, range);
  for (Operation &op : block.without_terminator())
    e.emit(op);
  Bools kept = e.bools(block.getTerminator()->getOperand(0));
  // Past the proof's limits no verdict counts.
  using P = arith::CmpIPredicate;
  auto below = [&](Value v, int64_t limit) {
    return arith::CmpIOp::create(b, loc, P::slt, v,
                                 arith::ConstantIndexOp::create(b, loc, limit));
  };
  Value proven = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, below(seqQ, kPositionLimit), below(seqKv, kPositionLimit)),
      arith::AndIOp::create(b, loc, below(batch, kIndexLimit), below(headHi, kIndexLimit)));
  proven = arith::AndIOp::create(b, loc, proven, e.allInside());
  Value t = arith::ConstantIntOp::create(b, loc, 1, 1);
  auto only = [&](Value yes, Value no) {
    return arith::AndIOp::create(
        b, loc, proven, arith::AndIOp::create(b, loc, yes, arith::XOrIOp::create(b, loc, no, t)));
  };
  return {only(kept.canBeTrue, kept.canBeFalse), only(kept.canBeFalse, kept.canBeTrue)};
}

std::pair<Value, Value>
attnc::emitTileClassWithMaskMod(OpBuilder &b, Location loc, Operation *module, Attribute mask,
                                Region &maskMod, const mask::TileBounds<Value> &tile,
                                Value batch, Value headLo, Value headHi,
                                LoadRangeFn loadRange) {
  bool decided = !maskMod.empty() && canEmitMaskModVerdict(maskMod);
  auto [full, empty] =
      attn::emitTileClass(b, loc, module, mask, !maskMod.empty() && !decided, tile);
  if (!decided)
    return {full, empty};
  auto [always, never] = emitMaskModVerdict(b, loc, maskMod, batch, headLo, headHi, tile.q0,
                                            tile.q1, tile.k0, tile.k1, tile.seqQ, tile.seqKv,
                                            loadRange);
  return {arith::AndIOp::create(b, loc, full, always),
          arith::OrIOp::create(b, loc, empty, never)};
}
