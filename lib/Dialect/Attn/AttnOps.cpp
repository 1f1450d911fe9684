//===- AttnOps.cpp - attn operations: syntax and verifiers ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.attention is written as a brace-delimited list of `name = value`
// parameters in any order, followed by optional score_mod / mask_mod regions.
// The verifier checks every combination a backend could not implement and
// names what would be valid.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "Attn/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

AttentionOp KernelOp::getAttention() {
  return dyn_cast_or_null<AttentionOp>(
      getBody().front().empty() ? nullptr : &getBody().front().front());
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  size_t count = body.getOperations().size();
  if (count == 1 && isa<AttentionOp>(body.front()))
    return success();
  for (Operation &op : body)
    if (!isa<AttentionOp>(op))
      return op.emitOpError("cannot appear in an attn.kernel body; a kernel "
                            "holds exactly one attn.attention");
  return emitOpError("must hold exactly one attn.attention, found ") << count;
}

//===----------------------------------------------------------------------===//
// AttentionOp syntax
//===----------------------------------------------------------------------===//

namespace {
constexpr StringLiteral kParameterNames =
    "num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, "
    "outputs";

/// Parses one `name = value` parameter into the op's properties.
class ParameterParser {
public:
  ParameterParser(OpAsmParser &parser, AttentionOp::Properties &props)
      : parser(parser), b(parser.getBuilder()), props(props) {}

  ParseResult parseOne() {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (failed(parser.parseOptionalKeyword(&name)))
      return parser.emitError(loc, "expected an attention parameter name, one "
                                   "of ")
             << kParameterNames;
    if (parser.parseEqual())
      return failure();
    if (!seen.insert(name).second)
      return parser.emitError(loc, "attention parameter '")
             << name << "' is given twice";
    if (name == "num_heads")
      return parseI64(props.num_heads);
    if (name == "num_kv_heads")
      return parseI64(props.num_kv_heads);
    if (name == "head_dim")
      return parseI64(props.head_dim);
    if (name == "dtype")
      return parseDType();
    if (name == "layout")
      return parseLayout();
    if (name == "mask")
      return parseMask();
    if (name == "scale")
      return parseScale();
    if (name == "max_seq")
      return parseMaxSeq();
    if (name == "outputs")
      return parseOutputs();
    return parser.emitError(loc, "unknown attention parameter '")
           << name << "'; expected one of " << kParameterNames;
  }

  ParseResult checkRequired(SMLoc loc) {
    for (StringRef name :
         {"num_heads", "head_dim", "dtype", "layout", "mask", "outputs"})
      if (!seen.contains(name))
        return parser.emitError(loc, "attention parameter '")
               << name << "' is required";
    return success();
  }

private:
  ParseResult parseI64(IntegerAttr &attr) {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    attr = b.getI64IntegerAttr(value);
    return success();
  }

  ParseResult parseDType() {
    Type type;
    if (parser.parseType(type))
      return failure();
    props.dtype = TypeAttr::get(type);
    return success();
  }

  ParseResult parseLayout() {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    std::optional<Layout> layout = symbolizeLayout(keyword);
    if (!layout)
      return parser.emitError(loc, "unknown layout '")
             << keyword << "'; expected bhsd or bshd";
    props.layout = LayoutAttr::get(b.getContext(), *layout);
    return success();
  }

  ParseResult parseMask() {
    SMLoc loc = parser.getCurrentLocation();
    Attribute attr;
    if (parser.parseAttribute(attr))
      return failure();
    props.mask = dyn_cast<MaskAttrInterface>(attr);
    if (!props.mask)
      return parser.emitError(loc, "expected a mask attribute (#attn.full, "
                                   "#attn.causal, #attn.sliding_window, "
                                   "#attn.block_sparse, #attn.longformer, "
                                   "#attn.bigbird, #attn.and, #attn.or), got ")
             << attr;
    return success();
  }

  ParseResult parseScale() {
    double value;
    if (parser.parseFloat(value))
      return failure();
    props.scale = b.getF64FloatAttr(value);
    return success();
  }

  ParseResult parseMaxSeq() {
    SmallVector<int64_t> values;
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
          return parser.parseInteger(values.emplace_back());
        }))
      return failure();
    props.max_seq = b.getDenseI64ArrayAttr(values);
    return success();
  }

  ParseResult parseOutputs() {
    OutputKind kinds = OutputKind::none;
    auto parseKind = [&]() -> ParseResult {
      SMLoc loc = parser.getCurrentLocation();
      StringRef keyword;
      if (parser.parseKeyword(&keyword))
        return failure();
      std::optional<OutputKind> kind = symbolizeOutputKind(keyword);
      if (!kind || *kind == OutputKind::none)
        return parser.emitError(loc, "unknown output '")
               << keyword << "'; expected out, lse or weights";
      if (bitEnumContainsAny(kinds, *kind))
        return parser.emitError(loc, "output '") << keyword << "' listed twice";
      kinds = kinds | *kind;
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseKind))
      return failure();
    props.outputs = OutputKindAttr::get(b.getContext(), kinds);
    return success();
  }

  OpAsmParser &parser;
  Builder b;
  AttentionOp::Properties &props;
  llvm::StringSet<> seen;
};
} // namespace

ParseResult AttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  ParameterParser params(parser, result.getOrAddProperties<Properties>());
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Braces,
                                     [&] { return params.parseOne(); }) ||
      params.checkRequired(loc))
    return failure();
  for (StringRef name : {"score_mod", "mask_mod"}) {
    Region *region = result.addRegion();
    if (succeeded(parser.parseOptionalKeyword(name)) &&
        parser.parseRegion(*region))
      return failure();
  }
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

void AttentionOp::print(OpAsmPrinter &p) {
  p << " {num_heads = " << getHeads();
  if (IntegerAttr kv = getNumKvHeadsAttr())
    p << ", num_kv_heads = " << kv.getInt();
  p << ", head_dim = " << getDim() << ", dtype = " << getDtype()
    << ", layout = " << stringifyLayout(getLayout()) << ", mask = ";
  p.printAttribute(getMask());
  if (FloatAttr scale = getScaleAttr()) {
    p << ", scale = ";
    p.printFloat(scale.getValue());
  }
  if (std::optional<ArrayRef<int64_t>> maxSeq = getMaxSeq()) {
    p << ", max_seq = [";
    llvm::interleaveComma(*maxSeq, p);
    p << ']';
  }
  p << ", outputs = [" << stringifyOutputKind(getOutputs()) << "]}";
  if (!getScoreMod().empty()) {
    p << " score_mod ";
    p.printRegion(getScoreMod());
  }
  if (!getMaskMod().empty()) {
    p << " mask_mod ";
    p.printRegion(getMaskMod());
  }
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

//===----------------------------------------------------------------------===//
// AttentionOp verifier
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  int64_t heads = getHeads(), kvHeads = getKvHeads(), dim = getDim();
  if (heads <= 0)
    return emitOpError("num_heads must be positive, got ") << heads;
  if (kvHeads <= 0)
    return emitOpError("num_kv_heads must be positive, got ") << kvHeads;
  if (heads % kvHeads != 0)
    return emitOpError("num_heads (")
           << heads << ") must be a multiple of num_kv_heads (" << kvHeads
           << "): each key/value head serves the same number of query heads";
  if (dim <= 0)
    return emitOpError("head_dim must be positive, got ") << dim;
  Type dtype = getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return emitOpError("dtype must be f32, f16 or bf16, got ") << dtype;
  if (FloatAttr scale = getScaleAttr()) {
    double value = scale.getValueAsDouble();
    if (!(std::isfinite(value) && value > 0))
      return emitOpError("scale must be a finite number > 0, got ") << value;
  }
  if (getOutputs() == OutputKind::none)
    return emitOpError("outputs must name at least one of out, lse, weights");
  return verifySequenceBounds();
}

/// max_seq, and everything that needs a bound on the sequence lengths.
LogicalResult AttentionOp::verifySequenceBounds() {
  std::optional<ArrayRef<int64_t>> maxSeq = getMaxSeq();
  if (!maxSeq) {
    if (hasOutput(OutputKind::weights))
      return emitOpError("output 'weights' is seq_q x seq_kv per head and "
                         "needs a bound: add max_seq = [seq_q, seq_kv] with "
                         "seq_q * seq_kv <= ")
             << kMaxWeightsElements;
    return success();
  }
  if (maxSeq->size() != 2 || (*maxSeq)[0] <= 0 || (*maxSeq)[1] <= 0)
    return emitOpError("max_seq must be [seq_q, seq_kv] with both > 0");
  int64_t maxQ = (*maxSeq)[0], maxKv = (*maxSeq)[1];
  if (hasOutput(OutputKind::weights) && maxQ > kMaxWeightsElements / maxKv)
    return emitOpError("output 'weights' with max_seq = [")
           << maxQ << ", " << maxKv << "] would hold " << maxQ * maxKv
           << " entries per head; the limit is " << kMaxWeightsElements;
  if (auto blocks = dyn_cast<BlockSparseMaskAttr>(getMask())) {
    int64_t coverQ = blocks.getNumQBlocks() * blocks.getBlockQ();
    int64_t coverKv = blocks.getNumKvBlocks() * blocks.getBlockKv();
    if (coverQ < maxQ || coverKv < maxKv)
      return emitOpError("block layout covers [")
             << coverQ << ", " << coverKv << "] positions but max_seq allows ["
             << maxQ << ", " << maxKv << "]; add blocks or lower max_seq";
  }
  return success();
}

bool mlir::attn::isModRegionOp(Operation *op) {
  return isa<
      // clang-format off
      arith::ConstantOp,
      arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::RemFOp,
      arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
      arith::MinNumFOp, arith::CmpFOp,
      math::AbsFOp, math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
      math::Log2Op, math::Log1pOp, math::TanhOp, math::SqrtOp, math::RsqrtOp,
      math::SinOp, math::CosOp, math::AtanOp, math::ErfOp, math::FloorOp,
      math::CeilOp, math::PowFOp, math::FmaOp,
      arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp, arith::DivUIOp,
      arith::RemSIOp, arith::RemUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
      arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::MaxSIOp, arith::MinSIOp,
      arith::MaxUIOp, arith::MinUIOp, arith::CmpIOp, math::AbsIOp,
      arith::SelectOp, arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
      arith::ExtUIOp, arith::TruncIOp, arith::SIToFPOp, arith::UIToFPOp,
      arith::FPToSIOp, arith::FPToUIOp, arith::ExtFOp, arith::TruncFOp
      // clang-format on
      >(op);
}

/// Every op of a body must be a scalar op of the supported set.
static LogicalResult verifyModOps(Block &block, StringRef name) {
  for (Operation &op : block.without_terminator()) {
    if (!isModRegionOp(&op))
      return op.emitOpError("is not supported in ")
             << name
             << "; bodies may use scalar arith and math ops (see the "
                "attn.attention documentation)";
    for (Type type : op.getResultTypes())
      if (!type.isIntOrIndexOrFloat())
        return op.emitOpError("in ")
               << name << " must produce scalars, got " << type;
  }
  return success();
}

/// Checks a score_mod / mask_mod body: its block arguments, and that it yields
/// one value of `yieldType`.
static LogicalResult verifyModRegion(AttentionOp op, Region &region,
                                     StringRef name, TypeRange argTypes,
                                     Type yieldType, StringRef signature) {
  if (region.empty())
    return success();
  Block &block = region.front();
  if (block.getNumArguments() != argTypes.size())
    return op.emitOpError()
           << name << " takes " << argTypes.size() << " arguments " << signature
           << ", got " << block.getNumArguments();
  for (auto [arg, type] : llvm::zip(block.getArguments(), argTypes))
    if (arg.getType() != type)
      return emitError(arg.getLoc())
             << name << " argument #" << arg.getArgNumber() << " must be "
             << type << " (signature " << signature << "), got "
             << arg.getType();
  if (failed(verifyModOps(block, name)))
    return failure();
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return block.getTerminator()->emitOpError()
           << "cannot end " << name << "; it must end in attn.yield";
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != yieldType)
    return yield.emitOpError("in ")
           << name << " must yield exactly one " << yieldType << ", got ("
           << yield.getValues().getTypes() << ")";
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  Builder b(getContext());
  Type index = b.getIndexType();
  if (failed(verifyModRegion(*this, getScoreMod(), "score_mod",
                             {b.getF32Type(), index, index, index, index},
                             b.getF32Type(),
                             "(score: f32, b, h, q_idx, kv_idx: index)")))
    return failure();
  return verifyModRegion(*this, getMaskMod(), "mask_mod",
                         {index, index, index, index}, b.getI1Type(),
                         "(b, h, q_idx, kv_idx: index)");
}
