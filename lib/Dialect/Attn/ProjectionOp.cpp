//===- ProjectionOp.cpp - attn.projection ---------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Its syntax, `{in_features = K, out_features = N, dtype = T, weights =
// pytorch}`, and its verifier.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "ParameterSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A work item keeps its 64-column panel of the weight in f32 on its stack,
/// in_features x 64 (512 KiB at 2048), as the multi-head attention's do.
constexpr int64_t kMaxInFeatures = 2048;
constexpr int64_t kMaxOutFeatures = 1 << 20;

constexpr const char *kParameters = "in_features, out_features, dtype, weights";

ParseResult parseParameter(OpAsmParser &parser, ProjectionOp::Properties &props,
                           StringRef name, SMLoc loc) {
  if (name == "in_features")
    return parseI64Parameter(parser, props.in_features);
  if (name == "out_features")
    return parseI64Parameter(parser, props.out_features);
  if (name == "dtype")
    return parseTypeParameter(parser, props.dtype);
  if (name == "weights")
    return parseWeightLayoutParameter(parser, props.weight_layout);
  return unknownParameter(parser, loc, "projection", name, kParameters);
}

} // namespace

ParseResult ProjectionOp::parse(OpAsmParser &parser, OperationState &result) {
  Properties &props = result.getOrAddProperties<Properties>();
  if (parseParameterList(parser, "projection", kParameters,
                         {"in_features", "out_features", "dtype"},
                         [&](StringRef name, SMLoc loc) {
                           return parseParameter(parser, props, name, loc);
                         }))
    return failure();
  if (!props.weight_layout)
    props.weight_layout = WeightLayoutAttr::get(parser.getContext(), WeightLayout::pytorch);
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void ProjectionOp::print(OpAsmPrinter &p) {
  p << " {in_features = " << getIn() << ", out_features = " << getOut()
    << ", dtype = " << getDtype() << ", weights = " << stringifyWeightLayout(getWeightLayout())
    << "}";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

LogicalResult ProjectionOp::verify() {
  if (getIn() < 1 || getIn() > kMaxInFeatures)
    return emitOpError("in_features must be in 1 to ") << kMaxInFeatures << ", got " << getIn();
  if (getOut() < 1 || getOut() > kMaxOutFeatures)
    return emitOpError("out_features must be in 1 to ")
           << kMaxOutFeatures << ", got " << getOut();
  Type dtype = getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return emitOpError("dtype must be f32, f16 or bf16, got ") << dtype;
  return success();
}
