//===- ModInputs.cpp - the input tensors mod bodies read ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/ModInputs.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr StringLiteral kSymbols[] = {"batch", "heads", "kv_heads", "seq_q", "seq_kv",
                                      "head_dim"};

/// The kernel's own tensors: an input may not take their names, which the
/// descriptor, the header and the Python package look tensors up by.
constexpr StringLiteral kReservedNames[] = {
    "q",     "k",       "v",        "out",          "lse",           "weights",
    "opt",   "kv_lens", "block_table", "cu_seqlens_q", "cu_seqlens_kv", "o_part",
    "lse_part"};

bool isIdentifier(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name[0]) || name[0] == '_'))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// What is wrong with `d`, or "" when it is a dim an input may have.
std::string dimProblem(const DimExpr &d) {
  if (d.isConstant())
    return d.offset >= 1 && d.offset <= kMaxDimConstant
               ? ""
               : "is " + std::to_string(d.offset) + "; a constant dim must be 1 to 2^31 - 1";
  if (!llvm::is_contained(kSymbols, d.symbol))
    return "names '" + d.symbol + "', not one of " + inputDimSymbols().str();
  if (d.scale < 1 || d.scale > kMaxDimScale)
    return "multiplies by " + std::to_string(d.scale) + "; the factor must be 1 to " +
           std::to_string(kMaxDimScale);
  if (d.offset < -kMaxDimOffset || d.offset > kMaxDimOffset)
    return "adds " + std::to_string(d.offset) + "; the constant must be -" +
           std::to_string(kMaxDimOffset) + " to " + std::to_string(kMaxDimOffset);
  return "";
}

ParseResult parseDim(OpAsmParser &parser, DimExpr &d) {
  SMLoc loc = parser.getCurrentLocation();
  OptionalParseResult scale = parser.parseOptionalInteger(d.scale);
  if (scale.has_value() && failed(*scale))
    return failure();
  if (scale.has_value() && failed(parser.parseOptionalStar())) { // a constant
    d.offset = d.scale;
    d.scale = 1;
    if (std::string bad = dimProblem(d); !bad.empty())
      return parser.emitError(loc, "input dim ") << bad;
    return success();
  }
  StringRef symbol;
  if (parser.parseKeyword(&symbol))
    return failure();
  d.symbol = symbol.str();
  bool minus = false;
  if (succeeded(parser.parseOptionalPlus()) || (minus = succeeded(parser.parseOptionalMinus()))) {
    if (parser.parseInteger(d.offset))
      return failure();
    d.offset = minus ? -d.offset : d.offset;
  }
  if (std::string bad = dimProblem(d); !bad.empty())
    return parser.emitError(loc, "input dim ") << bad;
  return success();
}

ParseResult parseInput(OpAsmParser &parser, SmallVectorImpl<Attribute> &inputs) {
  MLIRContext *ctx = parser.getContext();
  StringRef name;
  Type type;
  if (parser.parseKeyword(&name) || parser.parseColon() || parser.parseType(type))
    return failure();
  SmallVector<Attribute> dims;
  auto parseOne = [&]() -> ParseResult {
    DimExpr d;
    if (parseDim(parser, d))
      return failure();
    dims.push_back(StringAttr::get(ctx, d.text()));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  inputs.push_back(
      ModInputAttr::get(ctx, StringAttr::get(ctx, name), type, ArrayAttr::get(ctx, dims)));
  return success();
}
} // namespace

std::string DimExpr::text() const {
  if (isConstant())
    return std::to_string(offset);
  std::string s = (scale != 1 ? std::to_string(scale) + "*" : "") + symbol;
  if (offset)
    s += (offset > 0 ? "+" : "-") + std::to_string(offset > 0 ? offset : -offset);
  return s;
}

int64_t DimExpr::extent(int64_t value) const {
  return std::max<int64_t>(0, scale * value + offset);
}

std::optional<DimExpr> mlir::attn::parseDimExpr(StringRef text) {
  DimExpr d;
  StringRef rest = text;
  if (!text.empty() && llvm::all_of(text, llvm::isDigit)) { // a constant
    if (text.getAsInteger(10, d.offset) || !dimProblem(d).empty() || d.text() != text)
      return std::nullopt;
    return d;
  }
  if (size_t star = rest.find('*'); star != StringRef::npos) {
    if (rest.take_front(star).getAsInteger(10, d.scale))
      return std::nullopt;
    rest = rest.drop_front(star + 1);
  }
  size_t sign = rest.find_first_of("+-");
  d.symbol = rest.take_front(sign).str();
  if (sign != StringRef::npos) {
    if (rest.drop_front(sign + 1).getAsInteger(10, d.offset))
      return std::nullopt;
    d.offset = rest[sign] == '-' ? -d.offset : d.offset;
  }
  // Only the canonical spelling: the descriptor's text and the spec's agree.
  if (!dimProblem(d).empty() || d.text() != text)
    return std::nullopt;
  return d;
}

StringRef mlir::attn::inputDimSymbols() {
  return "batch, heads, kv_heads, seq_q, seq_kv, head_dim";
}

std::optional<int64_t> mlir::attn::fixedSymbol(AttentionSpecOpInterface spec,
                                               StringRef symbol) {
  if (symbol == "heads")
    return spec.getHeads();
  if (symbol == "kv_heads")
    return spec.getKvHeads();
  if (symbol == "head_dim")
    return spec.getDim();
  return std::nullopt;
}

std::optional<int64_t> mlir::attn::staticExtent(AttentionSpecOpInterface spec,
                                                const DimExpr &d) {
  if (d.isConstant())
    return d.offset;
  std::optional<int64_t> value = fixedSymbol(spec, d.symbol);
  return value ? std::optional<int64_t>(d.extent(*value)) : std::nullopt;
}

ModInputAttr mlir::attn::findModInput(ArrayAttr inputs, StringRef name) {
  if (inputs)
    for (Attribute a : inputs)
      if (auto input = dyn_cast<ModInputAttr>(a); input && input.getName() == name)
        return input;
  return {};
}

ParseResult mlir::attn::parseModInputs(OpAsmParser &parser, ArrayAttr &inputs) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&] { return parseInput(parser, list); }))
    return failure();
  inputs = ArrayAttr::get(parser.getContext(), list);
  return success();
}

void mlir::attn::printModInputs(OpAsmPrinter &p, ArrayAttr inputs) {
  p << "[";
  llvm::interleaveComma(inputs.getAsRange<ModInputAttr>(), p, [&](ModInputAttr input) {
    p << input.getName().getValue() << ": " << input.getElementType() << " [";
    // As the spec writes a dim: "2 * seq_kv - 1".
    llvm::interleaveComma(input.getDims().getAsValueRange<StringAttr>(), p, [&](StringRef dim) {
      std::optional<DimExpr> d = parseDimExpr(dim);
      if (!d || d->isConstant())
        return void(p << dim);
      if (d->scale != 1)
        p << d->scale << " * ";
      p << d->symbol;
      if (d->offset)
        p << (d->offset > 0 ? " + " : " - ") << std::abs(d->offset);
    });
    p << "]";
  });
  p << "]";
}

LogicalResult mlir::attn::verifyModInputs(AttentionSpecOpInterface spec) {
  ArrayAttr inputs = spec.getInputsAttr();
  if (!inputs)
    return success();
  Operation *op = spec.getOperation();
  if (int64_t(inputs.size()) > kMaxModInputs)
    return op->emitOpError("declares ") << inputs.size() << " inputs; at most "
                                        << kMaxModInputs << " are allowed";
  // A paged cache has no seq_kv: each sequence's length is its own.
  std::optional<uint64_t> page = spec.getPageSize();
  bool paged = spec.getNumSplits() && page && *page > 0;
  llvm::StringSet<> names;
  for (auto input : inputs.getAsRange<ModInputAttr>()) {
    StringRef name = input.getName().getValue();
    if (!isIdentifier(name) || llvm::is_contained(kReservedNames, name))
      return op->emitOpError("input name '")
             << name << "' must be a C identifier other than the kernel's own tensors "
             << "(q, k, v, out, lse, weights, ...)";
    if (!names.insert(name).second)
      return op->emitOpError("input '") << name << "' is declared twice";
    Type type = input.getElementType();
    if (!type.isInteger(32) && !type.isF32())
      return op->emitOpError("input '") << name << "' has type " << type
                                        << "; inputs are i32 or f32";
    ArrayAttr dims = input.getDims();
    if (dims.empty() || dims.size() > 4)
      return op->emitOpError("input '") << name << "' must have 1 to 4 dims, got "
                                        << dims.size();
    for (Attribute dim : dims) {
      auto text = dyn_cast<StringAttr>(dim);
      if (!text || !parseDimExpr(text.getValue()))
        return op->emitOpError("input '")
               << name << "' has dim " << dim << "; a dim is [S*]symbol[+C|-C] over "
               << inputDimSymbols();
      if (paged && parseDimExpr(text.getValue())->symbol == "seq_kv")
        return op->emitOpError("input '")
               << name << "' has dim " << dim << ", but a paged KV cache has no seq_kv "
               << "(each sequence has its own length); use a constant bound";
    }
  }
  return success();
}

ModInputAttr LoadOp::getInputDecl() {
  auto spec = dyn_cast<AttentionSpecOpInterface>((*this)->getParentOp());
  return spec ? findModInput(spec.getInputsAttr(), getInput()) : ModInputAttr();
}

LogicalResult LoadOp::verify() {
  ModInputAttr input = getInputDecl();
  if (!input)
    return emitOpError("reads '") << getInput()
                                  << "', which the spec's inputs do not declare";
  ArrayAttr dims = input.getDims();
  if (getIndices().size() != dims.size())
    return emitOpError("reads '") << getInput() << "' with " << getIndices().size()
                                  << " indices; it has " << dims.size() << " dims";
  if (getType() != input.getElementType())
    return emitOpError("yields ") << getType() << " but '" << getInput() << "' holds "
                                  << input.getElementType();
  auto spec = cast<AttentionSpecOpInterface>((*this)->getParentOp());
  for (auto [n, index] : llvm::enumerate(getIndices())) {
    std::optional<int64_t> c = getConstantIntValue(index);
    if (!c)
      continue;
    StringRef text = cast<StringAttr>(dims[n]).getValue();
    std::optional<DimExpr> d = parseDimExpr(text);
    std::optional<int64_t> extent = d ? staticExtent(spec, *d) : std::nullopt;
    if (*c < 0 || (extent && *c >= *extent))
      return emitOpError("index ") << *c << " of dim " << n << " lies outside '"
                                   << getInput() << "' (dim " << n << " is " << text
                                   << (extent && !d->isConstant()
                                           ? " = " + std::to_string(*extent)
                                           : "")
                                   << ")";
  }
  return success();
}
