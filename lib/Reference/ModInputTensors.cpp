//===- ModInputTensors.cpp - the tensors a spec's mods read ---------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "EvalContext.h"

#include "attnc/Dialect/Attn/ModInputs.h"

using namespace attnc;
using namespace mlir::attn;

/// The value a dim's symbol has for `size`.
static int64_t symbolValue(AttentionSpecOpInterface op, llvm::StringRef symbol,
                           const ProblemSize &size) {
  if (std::optional<int64_t> fixed = fixedSymbol(op, symbol))
    return *fixed;
  return symbol == "batch" ? size.batch : symbol == "seq_q" ? size.seqQ : size.seqKv;
}

llvm::SmallVector<int64_t, 4> attnc::modInputShape(AttentionSpecOpInterface op,
                                                   ModInputAttr decl, const ProblemSize &size) {
  llvm::SmallVector<int64_t, 4> shape;
  for (llvm::StringRef text : decl.getDims().getAsValueRange<mlir::StringAttr>()) {
    DimExpr d = *parseDimExpr(text); // verified
    shape.push_back(d.isConstant() ? d.offset : d.extent(symbolValue(op, d.symbol, size)));
  }
  return shape;
}

llvm::Error attnc::checkModInputs(AttentionSpecOpInterface op, const ProblemSize &size,
                                  const ModInputs &inputs) {
  mlir::ArrayAttr decls = op.getInputsAttr();
  size_t declared = decls ? decls.size() : 0;
  for (const auto &given : inputs)
    if (!findModInput(decls, given.getKey()))
      return detail::error("input '" + given.getKey() + "' is not among the spec's inputs");
  for (size_t i = 0; i < declared; ++i) {
    auto decl = llvm::cast<ModInputAttr>(decls[i]);
    llvm::StringRef name = decl.getName().getValue();
    auto it = inputs.find(name);
    ElementType type = *elementTypeOf(decl.getElementType());
    llvm::SmallVector<int64_t, 4> shape = modInputShape(op, decl, size);
    if (it == inputs.end())
      return detail::error("the spec's mods read input '" + name + "' (" + toString(type) +
                           " " + shapeString(shape) + "), which was not given");
    if (it->second.type != type || it->second.shape != shape)
      return detail::error("input '" + name + "' is " + toString(it->second.type) + " " +
                           it->second.shapeString() + " but the spec needs " +
                           toString(type) + " " + shapeString(shape));
  }
  return llvm::Error::success();
}
