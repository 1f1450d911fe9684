//===- ModInterpreter.cpp - evaluates score_mod / mask_mod bodies ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One case per op of mlir::attn::isModRegionOp; test/Reference/mod-ops.mlir
// runs each of them against values computed by hand.
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/ModInterpreter.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace attnc;
using namespace mlir;
using llvm::APInt;

namespace {

unsigned widthOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

Scalar boolean(bool value) { return Scalar::ofInt(APInt(1, value)); }

bool compareFloats(arith::CmpFPredicate pred, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (pred) {
  case P::AlwaysFalse:
    return false;
  case P::AlwaysTrue:
    return true;
  case P::ORD:
    return !unordered;
  case P::UNO:
    return unordered;
  case P::OEQ:
  case P::UEQ:
    return unordered ? pred == P::UEQ : a == b;
  case P::ONE:
  case P::UNE:
    return unordered ? pred == P::UNE : a != b;
  case P::OLT:
  case P::ULT:
    return unordered ? pred == P::ULT : a < b;
  case P::OLE:
  case P::ULE:
    return unordered ? pred == P::ULE : a <= b;
  case P::OGT:
  case P::UGT:
    return unordered ? pred == P::UGT : a > b;
  case P::OGE:
  case P::UGE:
    return unordered ? pred == P::UGE : a >= b;
  }
  llvm_unreachable("unknown cmpf predicate");
}

bool compareInts(arith::CmpIPredicate pred, const APInt &a, const APInt &b) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a.slt(b);
  case P::sle:
    return a.sle(b);
  case P::sgt:
    return a.sgt(b);
  case P::sge:
    return a.sge(b);
  case P::ult:
    return a.ult(b);
  case P::ule:
    return a.ule(b);
  case P::ugt:
    return a.ugt(b);
  case P::uge:
    return a.uge(b);
  }
  llvm_unreachable("unknown cmpi predicate");
}

/// The integer division or remainder `op` stands for; `b` is non-zero.
APInt divide(Operation &op, const APInt &a, const APInt &b) {
  using llvm::APIntOps::RoundingSDiv;
  return llvm::TypeSwitch<Operation *, APInt>(&op)
      .Case([&](arith::DivSIOp) { return a.sdiv(b); })
      .Case([&](arith::DivUIOp) { return a.udiv(b); })
      .Case([&](arith::RemSIOp) { return a.srem(b); })
      .Case([&](arith::RemUIOp) { return a.urem(b); })
      .Case([&](arith::FloorDivSIOp) { return RoundingSDiv(a, b, APInt::Rounding::DOWN); })
      .Default([&](Operation *) { return RoundingSDiv(a, b, APInt::Rounding::UP); });
}

/// Rounds to the precision of a float type narrower than double.
double roundToType(double value, Type type) {
  auto floatType = cast<FloatType>(type);
  if (floatType.getWidth() >= 64)
    return value;
  if (floatType.isF32()) // the common case, without APFloat: C++ rounds to nearest even
    return static_cast<float>(value);
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(floatType.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

} // namespace

llvm::Expected<Scalar> ModInterpreter::run(llvm::ArrayRef<Scalar> args) {
  values.clear();
  // Derivatives only where an argument seeds one (the forward reference's
  // calls do not pay for them).
  bool derive = seeded || llvm::any_of(args, [](const Scalar &a) { return a.d != 0; });
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    values.try_emplace(arg, value);
  for (Operation &op : block.without_terminator()) {
    llvm::Expected<Scalar> result = eval(op);
    if (!result)
      return result.takeError();
    if (derive && result->isFloat)
      result->d = &op == seeded ? 1.0 : slope(op, result->f);
    values.try_emplace(op.getResult(0), std::move(*result));
  }
  return get(block.getTerminator()->getOperand(0));
}

llvm::SmallVector<int64_t, 4> ModInterpreter::indicesOf(Operation *load) {
  llvm::SmallVector<int64_t, 4> at;
  for (Value index : cast<mlir::attn::LoadOp>(load).getIndices())
    at.push_back(get(index).i.getSExtValue());
  return at;
}

llvm::Expected<Scalar> ModInterpreter::eval(Operation &op) {
  auto f = [&](unsigned i) { return get(op.getOperand(i)).f; };
  auto i = [&](unsigned n) -> const APInt & { return get(op.getOperand(n)).i; };
  Type resultType = op.getResult(0).getType();
  // Every float result is rounded to its type, as the kernels compute it: a long f32 chain
  // evaluated in double alone drifts from what f32 arithmetic gives (2,000 additions of 1e-7).
  auto fl = [&](double v) { return Scalar::ofFloat(exact ? v : roundToType(v, resultType)); };
  auto in = [](APInt v) { return Scalar::ofInt(std::move(v)); };
  auto fail = [&](const char *what) -> llvm::Expected<Scalar> {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    if (auto fileLoc = dyn_cast<FileLineColLoc>(op.getLoc()))
      os << fileLoc.getFilename().getValue() << ':' << fileLoc.getLine() << ':'
         << fileLoc.getColumn();
    else
      os << op.getLoc();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: '%s': %s", loc.c_str(),
                                   op.getName().getStringRef().str().c_str(),
                                   what);
  };
  return llvm::TypeSwitch<Operation *, llvm::Expected<Scalar>>(&op)
      .Case([&](arith::ConstantOp c) -> llvm::Expected<Scalar> {
        if (auto fa = dyn_cast<FloatAttr>(c.getValue()))
          return fl(fa.getValueAsDouble());
        return in(cast<IntegerAttr>(c.getValue()).getValue());
      })
      .Case([&](mlir::attn::LoadOp load) -> llvm::Expected<Scalar> {
        if (!loader)
          return fail("no input tensors were given to read");
        llvm::SmallVector<int64_t, 4> at;
        for (unsigned n = 0; n < load.getIndices().size(); ++n)
          at.push_back(i(n).getSExtValue());
        llvm::Expected<Scalar> v = loader(load.getInput(), at);
        if (!v)
          return fail(llvm::toString(v.takeError()).c_str());
        return v;
      })
      // Floating point.
      .Case([&](arith::AddFOp) { return fl(f(0) + f(1)); })
      .Case([&](arith::SubFOp) { return fl(f(0) - f(1)); })
      .Case([&](arith::MulFOp) { return fl(f(0) * f(1)); })
      .Case([&](arith::DivFOp) { return fl(f(0) / f(1)); })
      .Case([&](arith::RemFOp) { return fl(std::fmod(f(0), f(1))); })
      .Case([&](arith::NegFOp) { return fl(-f(0)); })
      .Case([&](arith::MaximumFOp) {
        return fl(std::isnan(f(0)) || std::isnan(f(1)) ? NAN : std::max(f(0), f(1)));
      })
      .Case([&](arith::MinimumFOp) {
        return fl(std::isnan(f(0)) || std::isnan(f(1)) ? NAN : std::min(f(0), f(1)));
      })
      .Case([&](arith::MaxNumFOp) { return fl(std::fmax(f(0), f(1))); })
      .Case([&](arith::MinNumFOp) { return fl(std::fmin(f(0), f(1))); })
      .Case([&](arith::CmpFOp c) {
        return boolean(compareFloats(c.getPredicate(), f(0), f(1)));
      })
      .Case([&](math::AbsFOp) { return fl(std::fabs(f(0))); })
      .Case([&](math::ExpOp) { return fl(std::exp(f(0))); })
      .Case([&](math::Exp2Op) { return fl(std::exp2(f(0))); })
      .Case([&](math::ExpM1Op) { return fl(std::expm1(f(0))); })
      .Case([&](math::LogOp) { return fl(std::log(f(0))); })
      .Case([&](math::Log2Op) { return fl(std::log2(f(0))); })
      .Case([&](math::Log1pOp) { return fl(std::log1p(f(0))); })
      .Case([&](math::TanhOp) { return fl(std::tanh(f(0))); })
      .Case([&](math::SqrtOp) { return fl(std::sqrt(f(0))); })
      .Case([&](math::RsqrtOp) { return fl(1.0 / std::sqrt(f(0))); })
      .Case([&](math::SinOp) { return fl(std::sin(f(0))); })
      .Case([&](math::CosOp) { return fl(std::cos(f(0))); })
      .Case([&](math::AtanOp) { return fl(std::atan(f(0))); })
      .Case([&](math::ErfOp) { return fl(std::erf(f(0))); })
      .Case([&](math::FloorOp) { return fl(std::floor(f(0))); })
      .Case([&](math::CeilOp) { return fl(std::ceil(f(0))); })
      .Case([&](math::PowFOp) { return fl(std::pow(f(0), f(1))); })
      .Case([&](math::FmaOp) { return fl(std::fma(f(0), f(1), f(2))); })
      // Integer and index.
      .Case([&](arith::AddIOp) { return in(i(0) + i(1)); })
      .Case([&](arith::SubIOp) { return in(i(0) - i(1)); })
      .Case([&](arith::MulIOp) { return in(i(0) * i(1)); })
      .Case<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
            arith::FloorDivSIOp, arith::CeilDivSIOp>(
          [&](auto) -> llvm::Expected<Scalar> {
            if (i(1).isZero())
              return fail(isa<arith::RemSIOp, arith::RemUIOp>(op)
                              ? "integer remainder by zero"
                              : "integer division by zero");
            return in(divide(op, i(0), i(1)));
          })
      .Case([&](arith::AndIOp) { return in(i(0) & i(1)); })
      .Case([&](arith::OrIOp) { return in(i(0) | i(1)); })
      .Case([&](arith::XOrIOp) { return in(i(0) ^ i(1)); })
      .Case([&](arith::MaxSIOp) { return in(llvm::APIntOps::smax(i(0), i(1))); })
      .Case([&](arith::MinSIOp) { return in(llvm::APIntOps::smin(i(0), i(1))); })
      .Case([&](arith::MaxUIOp) { return in(llvm::APIntOps::umax(i(0), i(1))); })
      .Case([&](arith::MinUIOp) { return in(llvm::APIntOps::umin(i(0), i(1))); })
      .Case([&](arith::CmpIOp c) {
        return boolean(compareInts(c.getPredicate(), i(0), i(1)));
      })
      .Case([&](math::AbsIOp) { return in(i(0).abs()); })
      // Selection and casts.
      .Case([&](arith::SelectOp) {
        return get(op.getOperand(i(0).isOne() ? 1 : 2));
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>([&](auto) {
        return in(i(0).sextOrTrunc(widthOf(resultType)));
      })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](auto) {
        return in(i(0).zextOrTrunc(widthOf(resultType)));
      })
      .Case([&](arith::SIToFPOp) {
        return fl(static_cast<double>(i(0).getSExtValue()));
      })
      .Case([&](arith::UIToFPOp) {
        return fl(static_cast<double>(i(0).getZExtValue()));
      })
      .Case<arith::FPToSIOp, arith::FPToUIOp>([&](auto) -> llvm::Expected<Scalar> {
        double v = std::trunc(f(0));
        unsigned w = widthOf(resultType);
        bool isSigned = isa<arith::FPToSIOp>(op);
        llvm::APSInt result(w, !isSigned);
        bool exact;
        if (std::isnan(v) ||
            llvm::APFloat(v).convertToInteger(result, llvm::APFloat::rmTowardZero,
                                              &exact) != llvm::APFloat::opOK)
          return fail("float value does not fit the integer type");
        return in(result);
      })
      .Case<arith::ExtFOp>([&](auto) { return fl(f(0)); })
      .Case<arith::TruncFOp>([&](auto) { return fl(f(0)); })
      .Default([&](Operation *) {
        return fail("not implemented by the reference interpreter");
      });
}

/// d(result) from the operands' values and derivatives (`r`: the result's
/// value). Steps (floor, ceil, casts from integers, loads) have derivative 0
/// where it exists; max / min and select take their chosen operand's.
double ModInterpreter::slope(Operation &op, double r) {
  auto f = [&](unsigned n) { return get(op.getOperand(n)).f; };
  auto d = [&](unsigned n) { return get(op.getOperand(n)).d; };
  auto pick = [&](bool first) { return first ? d(0) : d(1); };
  return llvm::TypeSwitch<Operation *, double>(&op)
      .Case([&](arith::AddFOp) { return d(0) + d(1); })
      .Case([&](arith::SubFOp) { return d(0) - d(1); })
      .Case([&](arith::MulFOp) { return d(0) * f(1) + f(0) * d(1); })
      .Case([&](arith::DivFOp) { return (d(0) - r * d(1)) / f(1); })
      .Case([&](arith::RemFOp) { return d(0) - std::trunc(f(0) / f(1)) * d(1); })
      .Case([&](arith::NegFOp) { return -d(0); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) { return pick(f(0) >= f(1)); })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) { return pick(f(0) <= f(1)); })
      .Case([&](math::AbsFOp) { return f(0) < 0 ? -d(0) : d(0); })
      .Case<math::ExpOp>([&](auto) { return r * d(0); })
      .Case([&](math::Exp2Op) { return r * M_LN2 * d(0); })
      .Case([&](math::ExpM1Op) { return (r + 1) * d(0); })
      .Case([&](math::LogOp) { return d(0) / f(0); })
      .Case([&](math::Log2Op) { return d(0) / (f(0) * M_LN2); })
      .Case([&](math::Log1pOp) { return d(0) / (1 + f(0)); })
      .Case([&](math::TanhOp) { return (1 - r * r) * d(0); })
      .Case([&](math::SqrtOp) { return d(0) / (2 * r); })
      .Case([&](math::RsqrtOp) { return -0.5 * r * r * r * d(0); })
      .Case([&](math::SinOp) { return std::cos(f(0)) * d(0); })
      .Case([&](math::CosOp) { return -std::sin(f(0)) * d(0); })
      .Case([&](math::AtanOp) { return d(0) / (1 + f(0) * f(0)); })
      .Case([&](math::ErfOp) { return M_2_SQRTPI * std::exp(-f(0) * f(0)) * d(0); })
      .Case([&](math::PowFOp) {
        double dx = f(1) * std::pow(f(0), f(1) - 1) * d(0);
        return d(1) == 0 ? dx : dx + r * std::log(f(0)) * d(1);
      })
      .Case([&](math::FmaOp) { return d(0) * f(1) + f(0) * d(1) + d(2); })
      .Case([&](arith::SelectOp) {
        return get(op.getOperand(get(op.getOperand(0)).i.isOne() ? 1 : 2)).d;
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) { return d(0); })
      .Default([&](Operation *) { return 0.0; });
}
