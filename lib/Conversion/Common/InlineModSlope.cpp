//===- InlineModSlope.cpp - a score_mod and its derivative, inlined -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The backward kernels need d score_mod(s) / d s at every kept element, and
// d score_mod / d x for each element x of an f32 table it reads: the body is
// inlined op by op (inlineModOps) and each float op's derivatives are
// emitted after it, forward mode, from its operands' (chain rule), one
// chain per seed. Values that do not depend on a seed have none (zero); integer,
// comparison and rounding ops have none either (zero almost everywhere), as
// the reference's ModInterpreter computes them.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/InlineMod.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace {

/// Emits derivatives of one body's values; `slopes` maps a body value to
/// its derivative's (inlined) value, absent where it is zero.
class SlopeEmitter {
public:
  SlopeEmitter(OpBuilder &b, Location loc, IRMapping &map) : b(b), loc(loc), map(map) {}

  /// The derivative of `op`'s result from its operands' (op already inlined).
  Value slopeOf(Operation &op);
  llvm::DenseMap<Value, Value> slopes;

private:
  Value v(Value bodyValue) { return map.lookup(bodyValue); }
  Value d(Value bodyValue) { return slopes.lookup(bodyValue); }
  Value c(Value like, double x) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(like.getType(), x));
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  /// x * dy + y * dx style sums where either derivative may be absent.
  Value sum(Value x, Value y) { return !x ? y : !y ? x : add(x, y); }
  Value scaled(Value factor, Value slope) { return slope ? mul(factor, slope) : Value(); }
  Value pick(Value cond, Value x, Value y, Value like);
  Value unary(Operation &op, Value x, Value r);

  OpBuilder &b;
  Location loc;
  IRMapping &map;
};

/// select(cond, x, y) of two derivatives, either absent (zero).
Value SlopeEmitter::pick(Value cond, Value x, Value y, Value like) {
  if (!x && !y)
    return Value();
  return arith::SelectOp::create(b, loc, cond, x ? x : c(like, 0), y ? y : c(like, 0));
}

/// f'(x) of a one-operand math op with result r = f(x).
Value SlopeEmitter::unary(Operation &op, Value x, Value r) {
  return TypeSwitch<Operation *, Value>(&op)
      .Case([&](math::ExpOp) { return r; })
      .Case([&](math::Exp2Op) { return mul(r, c(r, std::log(2.0))); })
      .Case([&](math::ExpM1Op) { return add(r, c(r, 1)); })
      .Case([&](math::LogOp) { return div(c(x, 1), x); })
      .Case([&](math::Log2Op) { return div(c(x, 1 / std::log(2.0)), x); })
      .Case([&](math::Log1pOp) { return div(c(x, 1), add(x, c(x, 1))); })
      .Case([&](math::TanhOp) { return sub(c(r, 1), mul(r, r)); })
      .Case([&](math::SqrtOp) { return div(c(r, 0.5), r); })
      .Case([&](math::RsqrtOp) { return div(mul(c(r, -0.5), r), x); })
      .Case([&](math::SinOp) { return math::CosOp::create(b, loc, x).getResult(); })
      .Case([&](math::CosOp) { return neg(math::SinOp::create(b, loc, x)); })
      .Case([&](math::AtanOp) { return div(c(x, 1), add(c(x, 1), mul(x, x))); })
      .Case([&](math::ErfOp) {
        Value e = math::ExpOp::create(b, loc, neg(mul(x, x)));
        return mul(c(x, 2 / std::sqrt(M_PI)), e);
      })
      .Case([&](math::AbsFOp) {
        Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, c(x, 0));
        return arith::SelectOp::create(b, loc, negative, c(x, -1), c(x, 1)).getResult();
      })
      .Default([&](Operation *) { return Value(); });
}

Value SlopeEmitter::slopeOf(Operation &op) {
  auto operand = [&](unsigned i) { return op.getOperand(i); };
  Value r = op.getNumResults() ? v(op.getResult(0)) : Value();
  if (isa<arith::AddFOp>(op))
    return sum(d(operand(0)), d(operand(1)));
  if (isa<arith::SubFOp>(op))
    return !d(operand(1)) ? d(operand(0)) : sum(d(operand(0)), neg(d(operand(1))));
  if (isa<arith::NegFOp>(op))
    return d(operand(0)) ? neg(d(operand(0))) : Value();
  if (isa<arith::MulFOp>(op))
    return sum(scaled(v(operand(1)), d(operand(0))), scaled(v(operand(0)), d(operand(1))));
  if (isa<arith::DivFOp>(op)) { // (dx - r dy) / y
    Value top = !d(operand(1)) ? d(operand(0))
                               : sum(d(operand(0)), neg(mul(r, d(operand(1)))));
    return top ? div(top, v(operand(1))) : Value();
  }
  if (isa<arith::RemFOp>(op)) { // x - trunc(x / y) y: dx - trunc(x / y) dy
    if (!d(operand(1)))
      return d(operand(0));
    Value quotient = div(sub(v(operand(0)), r), v(operand(1)));
    return sum(d(operand(0)), neg(mul(quotient, d(operand(1)))));
  }
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(op)) {
    // The derivative of the operand the result is (the first on a tie).
    Value first = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, r, v(operand(0)));
    return pick(first, d(operand(0)), d(operand(1)), r);
  }
  if (isa<arith::SelectOp>(op))
    return pick(v(operand(0)), d(operand(1)), d(operand(2)), r);
  if (isa<math::FmaOp>(op)) // x y + z
    return sum(sum(scaled(v(operand(1)), d(operand(0))), scaled(v(operand(0)), d(operand(1)))),
               d(operand(2)));
  if (isa<math::PowFOp>(op)) { // r (y / x dx + log(x) dy)
    Value fromBase = d(operand(0)) ? mul(div(v(operand(1)), v(operand(0))), d(operand(0)))
                                   : Value();
    Value fromExp = d(operand(1)) ? mul(math::LogOp::create(b, loc, v(operand(0))),
                                        d(operand(1)))
                                  : Value();
    Value inner = sum(fromBase, fromExp);
    return inner ? mul(r, inner) : Value();
  }
  if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    Value x = d(operand(0));
    if (!x)
      return Value();
    IRMapping same;
    same.map(operand(0), x);
    return b.clone(op, same)->getResult(0);
  }
  if (op.getNumOperands() == 1 && d(operand(0))) {
    Value f = unary(op, v(operand(0)), r);
    return f ? mul(f, d(operand(0))) : Value();
  }
  // Integer, comparison, conversion and rounding ops, and float ops of
  // values that do not depend on the score.
  return Value();
}

} // namespace

mlir::attn::ModSlopes mlir::attn::inlineModWithSlopes(OpBuilder &b, Location loc, Region &region,
                                          ArrayRef<Value> args,
                                          llvm::function_ref<void(Value)> onZeroDivisor,
                                          ModLoadFn load, ArrayRef<Operation *> seeds) {
  IRMapping map;
  Block &block = region.front();
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    map.map(arg, value);
  // One emitter per seed, all over the same inlined values.
  std::vector<SlopeEmitter> emitters;
  for (size_t n = 0; n < seeds.size(); ++n)
    emitters.emplace_back(b, loc, map);
  auto one = [&](Value like) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(like.getType(), 1.0)).getResult();
  };
  for (auto [emitter, seed] : llvm::zip(emitters, seeds))
    if (!seed)
      emitter.slopes[block.getArgument(0)] = one(args[0]);
  for (Operation &op : block.without_terminator()) {
    inlineModOps(b, loc, block, map, [&](Operation &o) { return &o == &op; }, onZeroDivisor,
                 load);
    for (auto [emitter, seed] : llvm::zip(emitters, seeds)) {
      Value slope = seed == &op ? one(op.getResult(0)) : emitter.slopeOf(op);
      if (slope)
        emitter.slopes[op.getResult(0)] = slope;
    }
  }
  Value result = block.getTerminator()->getOperand(0);
  ModSlopes out{map.lookup(result), {}, {}};
  for (auto [emitter, seed] : llvm::zip(emitters, seeds)) {
    Value slope = emitter.slopes.lookup(result);
    out.slopes.push_back(slope ? slope
                               : arith::ConstantOp::create(
                                     b, loc, b.getFloatAttr(out.value.getType(), 0.0)));
    SmallVector<Value, 4> at;
    if (seed)
      for (Value index : seed->getOperands())
        at.push_back(map.lookup(index));
    out.indices.push_back(at);
  }
  return out;
}
