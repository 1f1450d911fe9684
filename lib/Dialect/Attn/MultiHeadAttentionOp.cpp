//===- MultiHeadAttentionOp.cpp - attn.multihead_attention ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Its syntax, `{embed_dim = E, dtype = T, weights = pytorch, key_padding =
// lengths}` then the body holding the attention, and its verifier: what the
// projections around the attention need of it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "ParameterSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The largest embed_dim and heads x head_dim: a work item keeps a 64-row
/// block of its product's input and a 64-column panel of its weight in f32
/// on its stack (512 KiB each at 2048).
constexpr int64_t kMaxEmbedDim = 2048;

constexpr const char *kParameters = "embed_dim, dtype, weights, key_padding";

/// Whether what `m` keeps depends on the number of keys: a window aligned
/// bottom-right, or BigBird's random blocks (drawn over the key blocks).
bool dependsOnKeyCount(const attnc::mask::Mask &m) {
  if (const auto *operands = attnc::mask::composedOperands(m))
    return llvm::any_of(*operands, dependsOnKeyCount);
  if (const auto *window = std::get_if<attnc::mask::Window>(&m.rule))
    return window->bottomRight;
  return std::holds_alternative<attnc::mask::BigBird>(m.rule);
}

ParseResult parseParameter(OpAsmParser &parser, MultiHeadAttentionOp::Properties &props,
                           StringRef name, SMLoc loc) {
  if (name == "embed_dim")
    return parseI64Parameter(parser, props.embed_dim);
  if (name == "dtype")
    return parseTypeParameter(parser, props.dtype);
  if (name == "weights")
    return parseWeightLayoutParameter(parser, props.weight_layout);
  if (name != "key_padding")
    return unknownParameter(parser, loc, "multi-head attention", name, kParameters);
  SMLoc at = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword != "none" && keyword != "lengths")
    return parser.emitError(at, "unknown key_padding '")
           << keyword << "'; expected none or lengths (an int32 key_lengths [batch])";
  if (keyword == "lengths")
    props.key_lengths = UnitAttr::get(parser.getContext());
  return success();
}

} // namespace

ParseResult MultiHeadAttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  Properties &props = result.getOrAddProperties<Properties>();
  if (parseParameterList(parser, "multi-head attention", kParameters, {"embed_dim", "dtype"},
                         [&](StringRef name, SMLoc loc) {
                           return parseParameter(parser, props, name, loc);
                         }))
    return failure();
  if (!props.weight_layout)
    props.weight_layout = WeightLayoutAttr::get(parser.getContext(), WeightLayout::pytorch);
  Region *body = result.addRegion();
  if (parser.parseRegion(*body))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void MultiHeadAttentionOp::print(OpAsmPrinter &p) {
  p << " {embed_dim = " << getEmbedSize() << ", dtype = " << getDtype()
    << ", weights = " << stringifyWeightLayout(getWeightLayout());
  if (hasKeyLengths())
    p << ", key_padding = lengths";
  p << "} ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

AttentionSpecOpInterface MultiHeadAttentionOp::getAttention() {
  Block &body = getBody().front();
  return body.empty() ? nullptr : dyn_cast<AttentionSpecOpInterface>(&body.front());
}

LogicalResult MultiHeadAttentionOp::verify() {
  int64_t e = getEmbedSize();
  if (e < 1 || e > kMaxEmbedDim)
    return emitOpError("embed_dim must be in 1 to ") << kMaxEmbedDim << ", got " << e;
  Type dtype = getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return emitOpError("dtype must be f32, f16 or bf16, got ") << dtype;
  Block &body = getBody().front();
  AttentionSpecOpInterface attention = getAttention();
  if (!attention || body.getOperations().size() != 1)
    return emitOpError("holds exactly one attn.attention (its attention part) in its body");
  if (isa<FlashBackwardOp>(attention.getOperation()) || attention.hasOutput(OutputKind::dq))
    return emitOpError("computes the forward; its attention cannot output gradients");
  if (!attention.getDtype().isF32() || attention.getLayout() != Layout::bshd ||
      attention.getOutputs() != OutputKind::out)
    return emitOpError("runs its attention on the projections' f32 results, token-major: "
                       "the attention needs dtype = f32, layout = bshd, outputs = [out]");
  if (attention.getNumSplits() || attention.getPageSize() || attention.getVarlen() ||
      attention.getInputsAttr() || attention.getAdditiveAttr())
    return emitOpError("takes attentions of one length per batch without inputs: drop "
                       "num_splits, kv_cache, varlen, inputs and additive");
  if (hasKeyLengths() && dependsOnKeyCount(attention.getMask().toMaskRule()))
    return emitOpError("masks keys past each sequence's length (key_padding = lengths); its "
                       "attention's mask must not depend on the number of keys: align it "
                       "top_left (the same without padding) and use no bigbird mask");
  int64_t width = attention.getHeads() * attention.getDim();
  if (width > kMaxEmbedDim)
    return emitOpError("heads x head_dim (") << width << ") must be at most " << kMaxEmbedDim;
  return success();
}
