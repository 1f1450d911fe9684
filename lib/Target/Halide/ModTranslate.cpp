//===- ModTranslate.cpp - score_mod / mask_mod bodies as Halide Exprs -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One case per op of mlir::attn::isModRegionOp, with the semantics the
// reference interpreter gives it (lib/Reference/ModInterpreter.cpp): integer
// division and remainder truncate (floordivsi / ceildivsi round as named),
// unsigned ops reinterpret their operands, sign extension of an i1 gives -1.
// A zero divisor fails the call (Halide's require: the tile function returns
// non-zero, the launch ATTNC_ERR_KERNEL) instead of Halide's x / 0 = 0.
//
//===----------------------------------------------------------------------===//

#include "ModTranslate.h"

#include <cmath>
#include <functional>
#include <map>

using namespace Halide;
using namespace attnc::halide;
using Halide::Internal::make_const;
using Halide::Internal::make_one;
using Halide::Internal::make_zero;

namespace {

Type typeOf(const std::string &name) {
  if (name == "f32")
    return Float(32);
  if (name == "f16")
    return Float(16);
  if (name == "bf16")
    return BFloat(16);
  if (name == "f64")
    return Float(64);
  if (name == "index")
    return Int(64);
  if (name == "i1")
    return Bool();
  if (name.size() > 1 && name[0] == 'i')
    return Int(std::stoi(name.substr(1)));
  throw CompileError("mod body: unknown type " + name);
}

Expr unsignedOf(const Expr &x) {
  return x.type().is_bool() ? x : reinterpret(UInt(x.type().bits()), x);
}

Expr nonZero(const Expr &divisor, const Expr &value) {
  return require(divisor != make_zero(divisor.type()), value,
                 "integer division or remainder by zero in a score_mod / mask_mod");
}

/// Integer division rounding down (up: !down), from the truncating one.
Expr roundedDivision(const Expr &x, const Expr &y, bool down) {
  Expr t = div_round_to_zero(x, y), r = x - t * y;
  Expr zero = make_zero(x.type()), one = make_one(x.type());
  Expr inexact = r != zero, sameSign = (r < zero) == (y < zero);
  return down ? select(inexact && !sameSign, t - one, t) : select(inexact && sameSign, t + one, t);
}

Expr compare(const std::string &p, const Expr &a, const Expr &b) {
  static const std::map<std::string, std::function<Expr(Expr, Expr)>> cmp = {
      {"eq", [](Expr x, Expr y) { return x == y; }}, {"ne", [](Expr x, Expr y) { return x != y; }},
      {"lt", [](Expr x, Expr y) { return x < y; }},  {"le", [](Expr x, Expr y) { return x <= y; }},
      {"gt", [](Expr x, Expr y) { return x > y; }},  {"ge", [](Expr x, Expr y) { return x >= y; }},
  };
  if (p == "false")
    return Internal::const_false();
  if (p == "true")
    return Internal::const_true();
  Expr ordered = a.type().is_float() ? !is_nan(a) && !is_nan(b) : Internal::const_true();
  if (p == "ord")
    return ordered;
  if (p == "uno")
    return !ordered;
  std::string rel = p.substr(1);
  auto it = cmp.find(rel);
  if (p == "eq" || p == "ne")
    return cmp.at(p)(a, b);
  if (it == cmp.end())
    throw CompileError("mod body: unknown comparison " + p);
  switch (p[0]) {
  case 's':
    return it->second(a, b);
  case 'u':
    if (a.type().is_float())
      return it->second(a, b) || !ordered;
    return it->second(unsignedOf(a), unsignedOf(b));
  case 'o':
    return it->second(a, b) && ordered;
  }
  throw CompileError("mod body: unknown comparison " + p);
}

/// Integer -> integer cast: sign- or zero-extending, or truncating.
Expr castInt(Type to, const Expr &x, bool zeroExtend) {
  if (x.type().is_bool())
    return zeroExtend ? cast(to, x) : select(x, make_const(to, -1), make_zero(to));
  if (to.is_bool())
    return (x & make_one(x.type())) != make_zero(x.type());
  return cast(to, zeroExtend ? unsignedOf(x) : x);
}

Expr applyOp(const ModOp &op, const std::vector<Expr> &v, const ModLoadFn &load) {
  const std::string &n = op.name;
  Type type = typeOf(op.type);
  auto a = [&](int i) { return v[size_t(op.operands[size_t(i)])]; };
  if (n == "attn.load") {
    if (!load)
      throw CompileError("mod body: this Halide pipeline reads no inputs (attn.load @" +
                         op.input + ")");
    std::vector<Expr> indices;
    for (int at : op.operands)
      indices.push_back(cast<int64_t>(v[size_t(at)]));
    return load(op.input, indices, type);
  }
  if (n == "arith.constant")
    return type.is_float() ? make_const(type, op.floatValue) : make_const(type, op.intValue);
  // Floating point.
  if (n == "arith.addf") return a(0) + a(1);
  if (n == "arith.subf") return a(0) - a(1);
  if (n == "arith.mulf") return a(0) * a(1);
  if (n == "arith.divf") return a(0) / a(1);
  if (n == "arith.remf") return a(0) - a(1) * trunc(a(0) / a(1));
  if (n == "arith.negf") return -a(0);
  if (n == "arith.maximumf" || n == "arith.maxnumf") return max(a(0), a(1));
  if (n == "arith.minimumf" || n == "arith.minnumf") return min(a(0), a(1));
  if (n == "arith.cmpf" || n == "arith.cmpi") return compare(op.predicate, a(0), a(1));
  if (n == "math.absf") return abs(a(0));
  if (n == "math.exp") return exp(a(0));
  if (n == "math.exp2") return exp(a(0) * make_const(type, M_LN2));
  if (n == "math.expm1") return exp(a(0)) - make_one(type);
  if (n == "math.log") return log(a(0));
  if (n == "math.log2") return log(a(0)) * make_const(type, 1.0 / M_LN2);
  if (n == "math.log1p") return log(make_one(type) + a(0));
  if (n == "math.tanh") return tanh(a(0));
  if (n == "math.sqrt") return sqrt(a(0));
  if (n == "math.rsqrt") return make_one(type) / sqrt(a(0));
  if (n == "math.sin") return sin(a(0));
  if (n == "math.cos") return cos(a(0));
  if (n == "math.atan") return atan(a(0));
  if (n == "math.erf") return erf(a(0));
  if (n == "math.floor") return floor(a(0));
  if (n == "math.ceil") return ceil(a(0));
  if (n == "math.powf") return pow(a(0), a(1));
  if (n == "math.fma") return a(0) * a(1) + a(2);
  // Integer and index (i1 logic on booleans).
  bool logic = type.is_bool();
  if (n == "arith.addi") return a(0) + a(1);
  if (n == "arith.subi") return a(0) - a(1);
  if (n == "arith.muli") return a(0) * a(1);
  if (n == "arith.divsi") return nonZero(a(1), div_round_to_zero(a(0), a(1)));
  if (n == "arith.remsi") return nonZero(a(1), mod_round_to_zero(a(0), a(1)));
  if (n == "arith.divui")
    return nonZero(a(1), reinterpret(type, unsignedOf(a(0)) / unsignedOf(a(1))));
  if (n == "arith.remui")
    return nonZero(a(1), reinterpret(type, unsignedOf(a(0)) % unsignedOf(a(1))));
  if (n == "arith.floordivsi") return nonZero(a(1), roundedDivision(a(0), a(1), true));
  if (n == "arith.ceildivsi") return nonZero(a(1), roundedDivision(a(0), a(1), false));
  if (n == "arith.andi") return logic ? a(0) && a(1) : a(0) & a(1);
  if (n == "arith.ori") return logic ? a(0) || a(1) : a(0) | a(1);
  if (n == "arith.xori") return logic ? a(0) != a(1) : a(0) ^ a(1);
  if (n == "arith.maxsi") return max(a(0), a(1));
  if (n == "arith.minsi") return min(a(0), a(1));
  if (n == "arith.maxui") return reinterpret(type, max(unsignedOf(a(0)), unsignedOf(a(1))));
  if (n == "arith.minui") return reinterpret(type, min(unsignedOf(a(0)), unsignedOf(a(1))));
  if (n == "math.absi") return cast(type, abs(a(0)));
  // Selection and casts.
  if (n == "arith.select") return select(a(0), a(1), a(2));
  if (n == "arith.index_cast" || n == "arith.extsi" || n == "arith.trunci")
    return castInt(type, a(0), false);
  if (n == "arith.index_castui" || n == "arith.extui") return castInt(type, a(0), true);
  if (n == "arith.sitofp") return cast(type, castInt(Int(64), a(0), false));
  if (n == "arith.uitofp") return cast(type, unsignedOf(a(0)));
  if (n == "arith.fptosi" || n == "arith.fptoui" || n == "arith.extf" || n == "arith.truncf")
    return cast(type, a(0));
  throw CompileError("mod body: the Halide backend does not translate " + n);
}

} // namespace

Expr attnc::halide::translateMod(const ModBody &body, const std::vector<Expr> &args,
                                 const ModLoadFn &load) {
  std::vector<Expr> values;
  for (size_t n = 0; n < body.argTypes.size(); ++n)
    values.push_back(cast(typeOf(body.argTypes[n]), args[n]));
  for (const ModOp &op : body.ops)
    values.push_back(applyOp(op, values, load));
  return values[size_t(body.result)];
}
