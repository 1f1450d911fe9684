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
#include "attnc/Dialect/Attn/ModInputs.h"

#include "ParameterSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#include "Attn/AttnOpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "Attn/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

AttentionSpecOpInterface KernelOp::getSpec() {
  return dyn_cast_or_null<AttentionSpecOpInterface>(
      getBody().front().empty() ? nullptr : &getBody().front().front());
}

AttentionOp KernelOp::getAttention() {
  return dyn_cast_or_null<AttentionOp>(getSpec().getOperation());
}

FlashOp KernelOp::getFlash() {
  return dyn_cast_or_null<FlashOp>(getSpec().getOperation());
}

KernelFamilyOpInterface KernelOp::getCompute() {
  return dyn_cast_or_null<KernelFamilyOpInterface>(
      getBody().front().empty() ? nullptr : &getBody().front().front());
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  size_t count = body.getOperations().size();
  auto held = [](Operation &op) {
    return isa<AttentionSpecOpInterface, KernelFamilyOpInterface>(op);
  };
  if (count == 1 && held(body.front()))
    return success();
  for (Operation &op : body)
    if (!held(op))
      return op.emitOpError("cannot appear in an attn.kernel body; a kernel "
                            "holds exactly one attn.attention (or its tiled "
                            "form, attn.flash), attn.linear_attention or "
                            "attn.multihead_attention");
  return emitOpError("must hold exactly one attn.attention (or attn.flash) or "
                     "attn.linear_attention, found ")
         << count;
}

//===----------------------------------------------------------------------===//
// AttentionOp syntax
//===----------------------------------------------------------------------===//

namespace {
constexpr StringLiteral kParameterNames =
    "num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, "
    "outputs, num_splits, kv_cache, varlen, inputs, additive";
constexpr StringLiteral kFlashParameterNames =
    "num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, "
    "outputs, num_splits, kv_cache, varlen, inputs, additive, block_q, block_kv";
constexpr StringLiteral kBackwardParameterNames =
    "num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, "
    "outputs, num_splits, kv_cache, varlen, inputs, additive, block_q, block_kv, kv_chunks";

/// The tile sizes only attn.flash has; a no-op for attn.attention.
template <typename Props>
ParseResult parseTileSize(Props &, StringRef, function_ref<ParseResult(IntegerAttr &)>,
                          bool &handled) {
  handled = false;
  return success();
}
template <>
ParseResult parseTileSize(FlashOp::Properties &props, StringRef name,
                          function_ref<ParseResult(IntegerAttr &)> parseI64,
                          bool &handled) {
  handled = name == "block_q" || name == "block_kv";
  if (!handled)
    return success();
  return parseI64(name == "block_q" ? props.block_q : props.block_kv);
}
template <>
ParseResult parseTileSize(FlashBackwardOp::Properties &props, StringRef name,
                          function_ref<ParseResult(IntegerAttr &)> parseI64,
                          bool &handled) {
  handled = name == "block_q" || name == "block_kv" || name == "kv_chunks";
  if (!handled)
    return success();
  return parseI64(name == "block_q"    ? props.block_q
                  : name == "block_kv" ? props.block_kv
                                       : props.kv_chunks);
}

/// Parses one `name = value` parameter into the op's properties (those of
/// attn.attention or attn.flash).
template <typename OpT> class ParameterParser {
  static constexpr bool isBackward = std::is_same_v<OpT, FlashBackwardOp>;
  static constexpr bool isFlash = std::is_same_v<OpT, FlashOp> || isBackward;
  static constexpr StringLiteral names = isBackward ? kBackwardParameterNames
                                         : isFlash  ? kFlashParameterNames
                                                    : kParameterNames;

public:
  ParameterParser(OpAsmParser &parser, typename OpT::Properties &props)
      : parser(parser), b(parser.getBuilder()), props(props) {}

  /// additive = @name (an input's name).
  ParseResult parseAdditive() {
    SMLoc loc = parser.getCurrentLocation();
    Attribute value;
    if (parser.parseAttribute(value))
      return failure();
    props.additive = dyn_cast<FlatSymbolRefAttr>(value);
    if (!props.additive)
      return parser.emitError(loc, "additive takes the name of an f32 input, as @name "
                                   "(additive = @va); got ")
             << value;
    return success();
  }

  ParseResult parseOne() {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parseParameterName(parser, "attention", names, seen, name))
      return failure();
    if (name == "num_heads")
      return parseI64(props.num_heads);
    if (name == "num_kv_heads")
      return parseI64(props.num_kv_heads);
    if (name == "head_dim")
      return parseI64(props.head_dim);
    if (name == "dtype")
      return parseTypeParameter(parser, props.dtype);
    if (name == "layout")
      return parseLayoutParameter(parser, props.layout);
    if (name == "mask")
      return parseMask();
    if (name == "scale")
      return parseF64Parameter(parser, props.scale);
    if (name == "max_seq")
      return parseMaxSeq();
    if (name == "outputs")
      return parseOutputs();
    if (name == "num_splits")
      return parseI64(props.num_splits);
    if (name == "kv_cache")
      return parseKvCache();
    if (name == "varlen")
      return parseVarlen();
    if (name == "inputs")
      return parseModInputs(parser, props.inputs);
    if (name == "additive")
      return parseAdditive();
    bool handled;
    ParseResult tile = parseTileSize(
        props, name, [&](IntegerAttr &attr) { return parseI64(attr); }, handled);
    if (handled)
      return tile;
    return parser.emitError(loc, "unknown attention parameter '")
           << name << "'; expected one of " << names;
  }

  ParseResult checkRequired(SMLoc loc) {
    SmallVector<StringRef> required{"num_heads", "head_dim", "dtype", "layout", "mask",
                                    "outputs"};
    if (isFlash)
      required.append({"block_q", "block_kv"});
    if (isBackward)
      required.push_back("kv_chunks");
    for (StringRef name : required)
      if (!seen.contains(name))
        return parser.emitError(loc, "attention parameter '")
               << name << "' is required";
    return success();
  }

private:
  ParseResult parseI64(IntegerAttr &attr) { return parseI64Parameter(parser, attr); }

  /// `lengths` (page_size 0), `paged<N>` or `paged<N, nhd>` (page_size N,
  /// token-major pages) or `paged<N, hnd>` (head-major pages).
  ParseResult parseKvCache() {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    int64_t pageSize = 0;
    if (keyword == "paged") {
      SMLoc at = parser.getCurrentLocation();
      if (parser.parseLess() || parser.parseInteger(pageSize))
        return failure();
      if (pageSize < 1)
        return parser.emitError(at, "paged<N> needs N >= 1 tokens per page, got ") << pageSize;
      if (succeeded(parser.parseOptionalComma())) {
        SMLoc form = parser.getCurrentLocation();
        StringRef order;
        if (parser.parseKeyword(&order))
          return failure();
        if (order != "nhd" && order != "hnd")
          return parser.emitError(form, "unknown page layout '")
                 << order << "'; expected nhd ([num_pages, N, kv_heads, head_dim]) or hnd "
                 << "([num_pages, kv_heads, N, head_dim])";
        if (order == "hnd")
          props.pages_head_major = b.getUnitAttr();
      }
      if (parser.parseGreater())
        return failure();
    } else if (keyword != "lengths") {
      return parser.emitError(loc, "unknown kv_cache '")
             << keyword << "'; expected lengths or paged<N>";
    }
    props.page_size = b.getI64IntegerAttr(pageSize);
    return success();
  }

  /// `cu_seqlens`, the one form (FlashAttention's varlen offsets).
  ParseResult parseVarlen() {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    if (keyword != "cu_seqlens")
      return parser.emitError(loc, "unknown varlen '")
             << keyword << "'; expected cu_seqlens (sequences packed end to end, "
             << "delimited by int32 offsets)";
    props.varlen = b.getUnitAttr();
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
               << keyword << "'; expected out, lse, weights or the gradients dq, dk, dv";
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
  typename OpT::Properties &props;
  llvm::StringSet<> seen;
};

template <typename OpT>
ParseResult parseSpecOp(OpAsmParser &parser, OperationState &result) {
  ParameterParser<OpT> params(parser,
                              result.getOrAddProperties<typename OpT::Properties>());
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

/// Prints the parameters up to `outputs`, without the closing brace.
void printSpecParameters(OpAsmPrinter &p, AttentionSpecOpInterface op,
                         IntegerAttr kvHeads) {
  p << " {num_heads = " << op.getHeads();
  if (kvHeads)
    p << ", num_kv_heads = " << kvHeads.getInt();
  p << ", head_dim = " << op.getDim() << ", dtype = " << op.getDtype()
    << ", layout = " << stringifyLayout(op.getLayout()) << ", mask = ";
  p.printAttribute(op.getMask());
  if (FloatAttr scale = op.getScaleAttr()) {
    p << ", scale = ";
    p.printFloat(scale.getValue());
  }
  if (std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq()) {
    p << ", max_seq = [";
    llvm::interleaveComma(*maxSeq, p);
    p << ']';
  }
  p << ", outputs = [" << stringifyOutputKind(op.getOutputs()) << "]";
  if (std::optional<uint64_t> splits = op.getNumSplits())
    p << ", num_splits = " << int64_t(*splits);
  if (std::optional<uint64_t> page = op.getPageSize()) {
    if (*page)
      p << ", kv_cache = paged<" << int64_t(*page) << (op.getPagesHeadMajor() ? ", hnd>" : ">");
    else
      p << ", kv_cache = lengths";
  }
  if (op.getVarlen())
    p << ", varlen = cu_seqlens";
  if (ArrayAttr inputs = op.getInputsAttr()) {
    p << ", inputs = ";
    printModInputs(p, inputs);
  }
  if (FlatSymbolRefAttr additive = op.getAdditiveAttr())
    p << ", additive = " << additive;
}

void printModRegions(OpAsmPrinter &p, AttentionSpecOpInterface op) {
  if (!op.getScoreMod().empty()) {
    p << " score_mod ";
    p.printRegion(op.getScoreMod());
  }
  if (!op.getMaskMod().empty()) {
    p << " mask_mod ";
    p.printRegion(op.getMaskMod());
  }
}
} // namespace

ParseResult AttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseSpecOp<AttentionOp>(parser, result);
}

ParseResult FlashOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseSpecOp<FlashOp>(parser, result);
}

ParseResult FlashBackwardOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseSpecOp<FlashBackwardOp>(parser, result);
}

void FlashBackwardOp::print(OpAsmPrinter &p) {
  printSpecParameters(p, *this, getNumKvHeadsAttr());
  p << ", block_q = " << getTileQ() << ", block_kv = " << getTileKv()
    << ", kv_chunks = " << getChunks() << "}";
  printModRegions(p, *this);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

void AttentionOp::print(OpAsmPrinter &p) {
  printSpecParameters(p, *this, getNumKvHeadsAttr());
  p << "}";
  printModRegions(p, *this);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

void FlashOp::print(OpAsmPrinter &p) {
  printSpecParameters(p, *this, getNumKvHeadsAttr());
  p << ", block_q = " << getTileQ() << ", block_kv = " << getTileKv() << "}";
  printModRegions(p, *this);
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(), getAttributeNames());
}

//===----------------------------------------------------------------------===//
// AttentionOp verifier
//===----------------------------------------------------------------------===//

namespace {
/// num_splits: a split-KV decode kernel (DecodeKernel.cpp) keeps the query
/// rows of a KV head's group (query heads x seq_q) and their accumulators on
/// its stack, so their count and size are bounded.
template <typename OpT> LogicalResult verifyDecode(OpT op) {
  std::optional<uint64_t> splits = op.getNumSplits();
  std::optional<uint64_t> page = op.getPageSize();
  if (page && !splits && !op.getVarlen())
    return op.emitOpError("kv_cache (per-sequence lengths, pages) is built for split-KV "
                          "decode kernels (and kv_cache = lengths for packed sequences, "
                          "varlen): add num_splits (0: auto)");
  if (op.getPagesHeadMajor() && (!page || *page == 0))
    return op.emitOpError("pages_head_major (kv_cache = paged<N, hnd>) needs pages: "
                          "kv_cache = paged<N, hnd>");
  if (page && (int64_t(*page) < 0 || int64_t(*page) > kMaxPageSize))
    return op.emitOpError("kv_cache = paged<N> needs N in 1 to ")
           << kMaxPageSize << " tokens per page, got " << int64_t(*page);
  if (!splits)
    return success();
  int64_t n = int64_t(*splits);
  if (n < 0 || n > kMaxNumSplits)
    return op.emitOpError("num_splits must be 0 (auto) to ") << kMaxNumSplits << ", got " << n;
  if (op.hasOutput(OutputKind::weights))
    return op.emitOpError("output 'weights' is not computed by a split-KV decode kernel "
                          "(num_splits); drop one of them");
  int64_t group = op.getHeads() / op.getKvHeads(), maxQ = decodeMaxSeqQ(op.getMaxSeq());
  int64_t rows = group * maxQ, padded = (op.getDim() + 15) / 16 * 16;
  if (rows > kMaxDecodeRows || rows * padded > kMaxDecodeElements)
    return op.emitOpError("a decode kernel (num_splits) computes the ")
           << group << " query heads of a KV head x " << maxQ
           << " query positions (max_seq's seq_q, 16 when not given) = " << rows
           << " rows together; at most " << kMaxDecodeRows << " rows and "
           << kMaxDecodeElements << " rows x head_dim are allowed: lower max_seq's seq_q";
  return success();
}

/// varlen = cu_seqlens: the prefill kernel over packed, token-major sequences.
template <typename OpT> LogicalResult verifyVarlen(OpT op) {
  if (!op.getVarlen())
    return success();
  if (op.getLayout() != Layout::bshd)
    return op.emitOpError("varlen = cu_seqlens packs sequences token after token "
                          "([total, heads, head_dim]): it needs layout = bshd");
  if (op.getNumSplits())
    return op.emitOpError("varlen = cu_seqlens is not built for decode kernels (num_splits) "
                          "yet: give each sequence's KV length with kv_cache = lengths and "
                          "num_splits instead");
  if (std::optional<uint64_t> page = op.getPageSize(); page && *page)
    return op.emitOpError("varlen = cu_seqlens takes kv_cache = lengths (the keys each "
                          "sequence uses), not pages");
  if (op.hasOutput(OutputKind::weights))
    return op.emitOpError("output 'weights' is not computed for packed sequences (varlen); "
                          "drop one of them");
  return success();
}

/// outputs = [dq, dk, dv]: a backward kernel (BackwardKernel.cpp), for the
/// batched prefill form so far.
template <typename OpT> LogicalResult verifyBackward(OpT op) {
  OutputKind grads = OutputKind::dq | OutputKind::dk | OutputKind::dv;
  bool backward = bitEnumContainsAny(op.getOutputs(), grads);
  if (std::is_same_v<OpT, FlashOp> && backward)
    return op.emitOpError("computes the forward; a spec with outputs = [dq, dk, dv] tiles "
                          "to attn.flash_backward");
  if (std::is_same_v<OpT, FlashBackwardOp> && !backward)
    return op.emitOpError("computes gradients: outputs must be [dq, dk, dv]");
  if (!backward)
    return success();
  if (op.getOutputs() != grads)
    return op.emitOpError("a backward kernel writes the gradients dq, dk and dv together and "
                          "nothing else (its out and lse are inputs); got outputs = [")
           << stringifyOutputKind(op.getOutputs()) << "]";
  if (op.getNumSplits() || op.getPageSize() || op.getVarlen())
    return op.emitOpError("a backward kernel (outputs = [dq, dk, dv]) is built for batched "
                          "q, k, v of one length each; drop num_splits, kv_cache and varlen");
  return success();
}

/// additive = @v: v an f32 input [head_dim] or [heads, head_dim], in a
/// prefill kernel (the decode, packed and backward kernels compute
/// dot-product scores only).
template <typename OpT> LogicalResult verifyAdditive(OpT op) {
  FlatSymbolRefAttr name = op.getAdditiveAttr();
  if (!name)
    return success();
  ModInputAttr v;
  if (ArrayAttr inputs = op.getInputsAttr())
    for (auto input : inputs.getAsRange<ModInputAttr>())
      if (input.getName().getValue() == name.getValue())
        v = input;
  if (!v)
    return op.emitOpError("additive = ")
           << name << " names no input: declare it in inputs, e.g. inputs = ["
           << name.getValue() << ": f32 [heads, head_dim]]";
  SmallVector<StringRef> dims(v.getDims().getAsValueRange<StringAttr>());
  bool perHead = dims.size() == 2 && dims[0] == "heads" && dims[1] == "head_dim";
  if (!v.getElementType().isF32() || !(perHead || (dims.size() == 1 && dims[0] == "head_dim")))
    return op.emitOpError("additive scores' vector '")
           << name.getValue() << "' must be f32 [head_dim] or [heads, head_dim]";
  if (op.getNumSplits() || op.getPageSize() || op.getVarlen() ||
      op.hasOutput(OutputKind::dq))
    return op.emitOpError("additive scores are built for prefill kernels (outputs out, lse, "
                          "weights) of one length per batch; drop num_splits, kv_cache, "
                          "varlen and the gradients");
  return success();
}

/// Checks shared by attn.attention, attn.flash and attn.flash_backward.
template <typename OpT> LogicalResult verifySpec(OpT op) {
  int64_t heads = op.getHeads(), kvHeads = op.getKvHeads(), dim = op.getDim();
  if (heads <= 0)
    return op.emitOpError("num_heads must be positive, got ") << heads;
  if (kvHeads <= 0)
    return op.emitOpError("num_kv_heads must be positive, got ") << kvHeads;
  if (heads % kvHeads != 0)
    return op.emitOpError("num_heads (")
           << heads << ") must be a multiple of num_kv_heads (" << kvHeads
           << "): each key/value head serves the same number of query heads";
  // Past any model's head size; unbounded, compile time grows with its square
  // and a huge value exhausts memory before any check could run.
  constexpr int64_t kMaxHeadDim = 1024;
  if (dim <= 0)
    return op.emitOpError("head_dim must be positive, got ") << dim;
  if (dim > kMaxHeadDim)
    return op.emitOpError("head_dim must be at most ") << kMaxHeadDim << ", got " << dim;
  Type dtype = op.getDtype();
  if (!dtype.isF32() && !dtype.isF16() && !dtype.isBF16())
    return op.emitOpError("dtype must be f32, f16 or bf16, got ") << dtype;
  if (FloatAttr scale = op.getScaleAttr()) {
    double value = scale.getValueAsDouble();
    if (!(std::isfinite(value) && value > 0))
      return op.emitOpError("scale must be a finite number > 0, got ") << value;
  }
  if (op.getOutputs() == OutputKind::none)
    return op.emitOpError("outputs must name at least one of out, lse, weights");
  if (failed(op.verifySequenceBounds()))
    return failure();
  if (failed(verifyBackward(op)) || failed(verifyDecode(op)) || failed(verifyVarlen(op)) ||
      failed(verifyAdditive(op)))
    return failure();
  return verifyModInputs(op);
}

/// max_seq, and everything that needs a bound on the sequence lengths.
template <typename OpT> LogicalResult verifyBounds(OpT op) {
  std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq();
  if (!maxSeq) {
    if (op.hasOutput(OutputKind::weights))
      return op.emitOpError("output 'weights' is seq_q x seq_kv per head and "
                            "needs a bound: add max_seq = [seq_q, seq_kv] with "
                            "seq_q * seq_kv <= ")
             << kMaxWeightsElements;
    return success();
  }
  if (maxSeq->size() != 2 || (*maxSeq)[0] <= 0 || (*maxSeq)[1] <= 0)
    return op.emitOpError("max_seq must be [seq_q, seq_kv] with both > 0");
  int64_t maxQ = (*maxSeq)[0], maxKv = (*maxSeq)[1];
  if (op.hasOutput(OutputKind::weights) && maxQ > kMaxWeightsElements / maxKv)
    return op.emitOpError("output 'weights' with max_seq = [")
           << maxQ << ", " << maxKv << "] would hold " << maxQ * maxKv
           << " entries per head; the limit is " << kMaxWeightsElements;
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  if (cover.q < maxQ || cover.kv < maxKv)
    return op.emitOpError("block layout covers [")
           << cover.q << ", " << cover.kv << "] positions but max_seq allows [" << maxQ
           << ", " << maxKv << "]; add blocks or lower max_seq";
  return success();
}
} // namespace

LogicalResult AttentionOp::verify() { return verifySpec(*this); }
LogicalResult AttentionOp::verifySequenceBounds() { return verifyBounds(*this); }
LogicalResult FlashOp::verifySequenceBounds() { return verifyBounds(*this); }
LogicalResult FlashBackwardOp::verifySequenceBounds() { return verifyBounds(*this); }

namespace {
/// A tiled form (attn.flash, attn.flash_backward) holds a normalized spec.
template <typename OpT> LogicalResult verifyTiled(OpT op) {
  if (op.getTileQ() <= 0 || op.getTileKv() <= 0)
    return op.emitOpError("block_q and block_kv must be positive, got ")
           << op.getTileQ() << " and " << op.getTileKv();
  if (!op.getNumKvHeadsAttr() || !op.getScaleAttr())
    return op.emitOpError("holds a normalized spec: num_kv_heads and scale must be "
                          "given (attn-normalize fills them in)");
  if (isa<CausalMaskAttr>(op.getMask()))
    return op.emitOpError("holds a normalized spec: write #attn.causal<a> as "
                          "#attn.sliding_window<left = inf, right = 0, align = a> "
                          "(attn-normalize does)");
  return verifySpec(op);
}
} // namespace

LogicalResult FlashOp::verify() { return verifyTiled(*this); }

LogicalResult FlashBackwardOp::verify() {
  if (getChunks() < 1 || getChunks() > kMaxKvChunks)
    return emitOpError("kv_chunks must be 1 to ") << kMaxKvChunks << ", got " << getChunks();
  return verifyTiled(*this);
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
      arith::FPToSIOp, arith::FPToUIOp, arith::ExtFOp, arith::TruncFOp,
      LoadOp
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
static LogicalResult verifyModRegion(Operation *op, Region &region,
                                     StringRef name, TypeRange argTypes,
                                     Type yieldType, StringRef signature) {
  if (region.empty())
    return success();
  Block &block = region.front();
  if (block.getNumArguments() != argTypes.size())
    return op->emitOpError()
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

static LogicalResult verifyModRegions(AttentionSpecOpInterface spec) {
  Operation *op = spec.getOperation();
  Builder b(op->getContext());
  Type index = b.getIndexType();
  if (failed(verifyModRegion(op, spec.getScoreMod(), "score_mod",
                             {b.getF32Type(), index, index, index, index},
                             b.getF32Type(),
                             "(score: f32, b, h, q_idx, kv_idx: index)")))
    return failure();
  return verifyModRegion(op, spec.getMaskMod(), "mask_mod",
                         {index, index, index, index}, b.getI1Type(),
                         "(b, h, q_idx, kv_idx: index)");
}

LogicalResult AttentionOp::verifyRegions() { return verifyModRegions(*this); }
LogicalResult FlashOp::verifyRegions() { return verifyModRegions(*this); }
LogicalResult FlashBackwardOp::verifyRegions() { return verifyModRegions(*this); }

