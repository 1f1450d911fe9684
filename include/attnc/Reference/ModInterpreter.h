//===- ModInterpreter.h - evaluates score_mod / mask_mod bodies -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A direct interpreter for the scalar arith / math ops the attn verifier
// allows in score_mod and mask_mod regions (mlir::attn::isModRegionOp).
// Floats are evaluated in double (the reference's precision) and each float
// result is rounded to its type, unless the interpreter is exact; integers
// keep their bit width (index is 64 bits). Every float value also carries
// its derivative with respect to the float arguments (forward mode: the
// arguments' `d` seed it), or with respect to one float attn.load's element
// (seedLoad), which the reference backward takes for d score_mod / d score
// and d score_mod / d (a mod input's element).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_MODINTERPRETER_H
#define ATTNC_REFERENCE_MODINTERPRETER_H

#include "mlir/IR/Region.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <functional>

namespace attnc {

/// A float (held in double) or an integer of any width (i1 included).
struct Scalar {
  bool isFloat = false;
  double f = 0;
  llvm::APInt i;
  double d = 0; // a float's derivative (see the file comment)

  static Scalar ofFloat(double value) { return {true, value, llvm::APInt()}; }
  static Scalar ofInt(llvm::APInt value) { return {false, 0, std::move(value)}; }
  static Scalar ofIndex(int64_t value) {
    return ofInt(llvm::APInt(64, value, /*isSigned=*/true));
  }
};

class ModInterpreter {
public:
  /// `region` must be a verified score_mod or mask_mod body.
  explicit ModInterpreter(mlir::Region &region) : block(region.front()) {}

  /// Runs the body on `args` (one per block argument) and returns the value
  /// it yields. Fails, naming the op, on integer division by zero.
  llvm::Expected<Scalar> run(llvm::ArrayRef<Scalar> args);

  /// What an attn.load reads: the input's name and the indices -> the
  /// element, or an error (an index outside the input's shape).
  using Loader =
      std::function<llvm::Expected<Scalar>(llvm::StringRef, llvm::ArrayRef<int64_t>)>;
  /// Without a loader, a body that loads fails.
  void setLoader(Loader fn) { loader = std::move(fn); }
  /// Float results in double, not rounded to their types (the backward's
  /// forward pass: exact derivatives of a function that has them).
  void setExact(bool on) { exact = on; }
  /// The next runs derive with respect to what `load` (an attn.load of the
  /// body, null: none) reads, instead of the arguments.
  void seedLoad(mlir::Operation *load) { seeded = load; }
  /// The indices `load` read in the last run.
  llvm::SmallVector<int64_t, 4> indicesOf(mlir::Operation *load);

private:
  llvm::Expected<Scalar> eval(mlir::Operation &op);
  double slope(mlir::Operation &op, double result);
  const Scalar &get(mlir::Value value) { return values.find(value)->second; }

  mlir::Block &block;
  Loader loader;
  bool exact = false;
  mlir::Operation *seeded = nullptr;
  llvm::DenseMap<mlir::Value, Scalar> values;
};

} // namespace attnc

#endif // ATTNC_REFERENCE_MODINTERPRETER_H
