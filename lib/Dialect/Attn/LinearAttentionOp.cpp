//===- LinearAttentionOp.cpp - attn.linear_attention: syntax, verifier ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.linear_attention is written as attn.attention is: a brace-delimited
// list of `name = value` parameters in any order. The verifier names what
// would be valid for each parameter a kernel could not implement.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "ParameterSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kLinearParameterNames =
    "num_heads, num_kv_heads, head_dim, value_dim, dtype, layout, feature_map, causal, "
    "normalize, scale, eps, chunk, state";

/// The largest head_dim and value_dim: a work item keeps a chunk's rows of
/// both, and its state's rows, in f32 on its stack.
constexpr int64_t kMaxLinearDim = 256;

class LinearParameterParser {
public:
  LinearParameterParser(OpAsmParser &parser, LinearAttentionOp::Properties &props)
      : parser(parser), b(parser.getBuilder()), props(props) {}

  ParseResult parseOne(StringRef name, SMLoc loc) {
    for (auto [param, attr] : {std::pair{"num_heads", &props.num_heads},
                               {"num_kv_heads", &props.num_kv_heads},
                               {"head_dim", &props.head_dim},
                               {"value_dim", &props.value_dim},
                               {"chunk", &props.chunk}})
      if (name == param)
        return parseI64Parameter(parser, *attr);
    if (name == "scale")
      return parseF64Parameter(parser, props.scale);
    if (name == "eps")
      return parseF64Parameter(parser, props.eps);
    if (name == "dtype")
      return parseTypeParameter(parser, props.dtype);
    if (name == "causal")
      return parseBool([&](bool v) { props.causal = v ? b.getUnitAttr() : nullptr; });
    if (name == "normalize")
      return parseBool([&](bool v) { props.unnormalized = v ? nullptr : b.getUnitAttr(); });
    return parseKeywordParameter(name, loc);
  }

private:
  /// layout, feature_map and state, whose values are keywords.
  ParseResult parseKeywordParameter(StringRef name, SMLoc loc) {
    if (name == "layout")
      return parseLayoutParameter(parser, props.layout);
    if (name != "feature_map" && name != "state")
      return unknownParameter(parser, loc, "linear attention", name, kLinearParameterNames);
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    if (name == "feature_map") {
      std::optional<FeatureMap> map = symbolizeFeatureMap(keyword);
      if (!map)
        return parser.emitError(at, "unknown feature_map '")
               << keyword << "'; expected identity, elu1 or relu";
      props.feature_map = FeatureMapAttr::get(b.getContext(), *map);
      return success();
    }
    if (keyword != "carry")
      return parser.emitError(at, "unknown state '")
             << keyword << "'; expected carry (take initial_state, write final_state)";
    props.carry_state = b.getUnitAttr();
    return success();
  }

  ParseResult parseBool(function_ref<void(bool)> set) {
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    if (keyword != "true" && keyword != "false")
      return parser.emitError(at, "expected true or false, got '") << keyword << "'";
    set(keyword == "true");
    return success();
  }

  OpAsmParser &parser;
  Builder b;
  LinearAttentionOp::Properties &props;
};

} // namespace

ParseResult LinearAttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  LinearParameterParser params(parser, result.getOrAddProperties<Properties>());
  if (parseParameterList(parser, "linear attention", kLinearParameterNames,
                         {"num_heads", "head_dim", "dtype", "layout", "feature_map"},
                         [&](StringRef name, SMLoc loc) { return params.parseOne(name, loc); }))
    return failure();
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void LinearAttentionOp::print(OpAsmPrinter &p) {
  p << " {num_heads = " << getHeads();
  if (getNumKvHeadsAttr())
    p << ", num_kv_heads = " << getKvHeads();
  p << ", head_dim = " << getDim();
  if (getValueDimAttr())
    p << ", value_dim = " << getValueDimOrDefault();
  p << ", dtype = " << getDtype() << ", layout = " << stringifyLayout(getLayout())
    << ", feature_map = " << stringifyFeatureMap(getFeatureMap());
  if (getCausal())
    p << ", causal = true";
  if (!getNormalize())
    p << ", normalize = false";
  for (auto [name, attr] : {std::pair{"scale", getScaleAttr()}, {"eps", getEpsAttr()}})
    if (attr) {
      p << ", " << name << " = ";
      p.printFloat(attr.getValue());
    }
  if (getChunkAttr())
    p << ", chunk = " << getChunkOrDefault();
  if (getCarryState())
    p << ", state = carry";
  p << "}";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

LogicalResult LinearAttentionOp::verify() {
  int64_t heads = getHeads(), kvHeads = getKvHeads();
  if (heads < 1 || kvHeads < 1 || heads % kvHeads != 0)
    return emitOpError("num_heads (") << heads << ") must be a positive multiple of num_kv_heads ("
                                      << kvHeads << ")";
  for (auto [name, dim] : {std::pair{"head_dim", getDim()}, {"value_dim", getValueDimOrDefault()}})
    if (dim < 1 || dim > kMaxLinearDim)
      return emitOpError() << name << " must be in 1 to " << kMaxLinearDim << ", got " << dim;
  Type dtype = getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return emitOpError("dtype must be f32, f16 or bf16, got ") << dtype;
  double scale = getScaleOrDefault(), eps = getEpsOrDefault();
  if (!(scale > 0) || !std::isfinite(scale))
    return emitOpError("scale must be finite and > 0, got ") << scale;
  if (!(eps >= 0) || !std::isfinite(eps))
    return emitOpError("eps must be finite and >= 0, got ") << eps;
  if (getEpsAttr() && !getNormalize())
    return emitOpError("eps is added to the normalizer, which normalize = false drops: "
                       "remove one of them");
  if (getChunkAttr() && !getCausal())
    return emitOpError("chunk sizes the causal form's chunks; a non-causal kernel has "
                       "none: remove it or add causal = true");
  int64_t chunk = getChunkOrDefault();
  if (chunk != 32 && chunk != 64 && chunk != 128)
    return emitOpError("chunk must be 32, 64 or 128, got ") << chunk;
  if (getCarryState() && !getCausal())
    return emitOpError("state = carry continues a sequence (prefill, then decode steps), "
                       "which needs causal = true");
  return success();
}
