//===- ParameterSyntax.h - `name = value` parameters of attn ops -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The spec ops (attn.attention and its tiled forms, attn.linear_attention,
// attn.multihead_attention) are written as a brace-delimited list of
// `name = value` parameters in any order; these read the parts they share.
// Private to lib/Dialect/Attn.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTN_PARAMETERSYNTAX_H
#define ATTNC_LIB_DIALECT_ATTN_PARAMETERSYNTAX_H

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::attn {

/// `name =` of the next parameter of an op whose parameters `what` names
/// ("attention", "linear attention"); an error listing `names` when there
/// is no name, and one when `seen` has it already.
inline ParseResult parseParameterName(OpAsmParser &parser, StringRef what, StringRef names,
                                      llvm::StringSet<> &seen, StringRef &name) {
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseOptionalKeyword(&name)))
    return parser.emitError(loc, "expected ")
           << (StringRef("aeiou").contains(what.front()) ? "an " : "a ") << what
           << " parameter name, one of " << names;
  if (parser.parseEqual())
    return failure();
  if (!seen.insert(name).second)
    return parser.emitError(loc) << what << " parameter '" << name << "' is given twice";
  return success();
}

/// `{name = value, ...}`: each name checked by parseParameterName, its value
/// parsed by `parseValue(name, loc)` (the error for a name it does not know:
/// unknownParameter), then an error at the brace for each of `required`
/// that was not given.
inline ParseResult
parseParameterList(OpAsmParser &parser, StringRef what, StringRef names,
                   ArrayRef<StringRef> required,
                   function_ref<ParseResult(StringRef name, SMLoc loc)> parseValue) {
  llvm::StringSet<> seen;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        SMLoc at = parser.getCurrentLocation();
        StringRef name;
        if (parseParameterName(parser, what, names, seen, name))
          return failure();
        return parseValue(name, at);
      }))
    return failure();
  for (StringRef name : required)
    if (!seen.contains(name))
      return parser.emitError(loc) << what << " parameter '" << name << "' is required";
  return success();
}

/// "unknown <what> parameter 'name'; expected one of <names>".
inline ParseResult unknownParameter(OpAsmParser &parser, SMLoc loc, StringRef what,
                                    StringRef name, StringRef names) {
  return parser.emitError(loc, "unknown ")
         << what << " parameter '" << name << "'; expected one of " << names;
}

inline ParseResult parseI64Parameter(OpAsmParser &parser, IntegerAttr &attr) {
  int64_t value;
  if (parser.parseInteger(value))
    return failure();
  attr = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}

inline ParseResult parseF64Parameter(OpAsmParser &parser, FloatAttr &attr) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  attr = parser.getBuilder().getF64FloatAttr(value);
  return success();
}

inline ParseResult parseTypeParameter(OpAsmParser &parser, TypeAttr &attr) {
  Type type;
  if (parser.parseType(type))
    return failure();
  attr = TypeAttr::get(type);
  return success();
}

/// `bhsd` or `bshd`.
inline ParseResult parseLayoutParameter(OpAsmParser &parser, LayoutAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<Layout> layout = symbolizeLayout(keyword);
  if (!layout)
    return parser.emitError(loc, "unknown layout '") << keyword << "'; expected bhsd or bshd";
  attr = LayoutAttr::get(parser.getContext(), *layout);
  return success();
}

/// `pytorch` ([out, in], y = x W^T) or `onnx` ([in, out], y = x W).
inline ParseResult parseWeightLayoutParameter(OpAsmParser &parser, WeightLayoutAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<WeightLayout> layout = symbolizeWeightLayout(keyword);
  if (!layout)
    return parser.emitError(loc, "unknown weights '")
           << keyword << "'; expected pytorch ([out, in], y = x W^T) or onnx ([in, out], y = x W)";
  attr = WeightLayoutAttr::get(parser.getContext(), *layout);
  return success();
}

} // namespace mlir::attn

#endif // ATTNC_LIB_DIALECT_ATTN_PARAMETERSYNTAX_H
