//===- AttnAttrs.cpp - mask attributes: syntax, verifiers, semantics ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each mask translates itself into the plain-data rule of
// attnc/Support/MaskRules.h (toMaskRule); isKept and classifyTile are the
// interface's defaults over that rule, so no mask states its semantics here.
// Verifiers reject parameters no kernel could implement and say what would be
// valid.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Custom syntax pieces
//===----------------------------------------------------------------------===//

/// A window bound: a non-negative integer or `inf`.
static ParseResult parseWindowBound(AsmParser &parser, int64_t &bound) {
  if (succeeded(parser.parseOptionalKeyword("inf"))) {
    bound = kUnbounded;
    return success();
  }
  return parser.parseInteger(bound);
}

static void printWindowBound(AsmPrinter &printer, int64_t bound) {
  if (bound == kUnbounded)
    printer << "inf";
  else
    printer << bound;
}

/// `[i, j, ...]`, possibly empty.
static ParseResult parseIndexList(AsmParser &parser,
                                  SmallVector<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    return parser.parseInteger(values.emplace_back());
  });
}

static void printIndexList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

/// A causal mask's alignment, one error naming both choices if it is neither.
static ParseResult parseAlignment(AsmParser &parser, Alignment &alignment) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  std::optional<Alignment> parsed;
  if (succeeded(parser.parseOptionalKeyword(&keyword)))
    parsed = symbolizeAlignment(keyword);
  if (!parsed)
    return parser.emitError(loc, "expected the alignment, top_left or bottom_right");
  alignment = *parsed;
  return success();
}

static void printAlignment(AsmPrinter &printer, Alignment alignment) {
  printer << stringifyAlignment(alignment);
}

/// The masks of an `and` / `or`. A failure inside a nested mask has already
/// been reported at its location: this adds nothing, so that one mistake is one
/// error however deep it sits.
static ParseResult parseMaskList(AsmParser &parser, SmallVector<Attribute> &masks) {
  return parser.parseCommaSeparatedList([&] {
    return parser.parseAttribute(masks.emplace_back());
  });
}

static void printMaskList(AsmPrinter &printer, ArrayRef<Attribute> masks) {
  llvm::interleaveComma(masks, printer);
}

#define GET_ATTRDEF_CLASSES
#include "Attn/AttnAttrs.cpp.inc"
#include "Attn/AttnAttrInterfaces.cpp.inc"

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Attn/AttnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

static LogicalResult
verifyPositive(function_ref<InFlightDiagnostic()> emitError, StringRef mask,
               StringRef name, int64_t value) {
  if (value > 0)
    return success();
  return emitError() << "#attn." << mask << " '" << name
                     << "' must be a positive number of tokens, got " << value;
}

static LogicalResult
verifyNonNegative(function_ref<InFlightDiagnostic()> emitError, StringRef mask,
                  StringRef name, int64_t value) {
  if (value >= 0)
    return success();
  return emitError() << "#attn." << mask << " '" << name
                     << "' must be >= 0, got " << value;
}

//===----------------------------------------------------------------------===//
// full, causal, sliding_window
//===----------------------------------------------------------------------===//

attnc::mask::Mask FullMaskAttr::toMaskRule() const {
  return {attnc::mask::Full{}};
}

attnc::mask::Mask CausalMaskAttr::toMaskRule() const {
  return attnc::mask::causal(getAlignment() == Alignment::bottom_right);
}

attnc::mask::Mask SlidingWindowMaskAttr::toMaskRule() const {
  return {attnc::mask::Window{getLeft(), getRight(),
                              getAlignment() == Alignment::bottom_right}};
}

LogicalResult
SlidingWindowMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t left, int64_t right, Alignment) {
  for (auto [name, bound] : {std::pair{"left", left}, {"right", right}})
    if (bound < 0)
      return emitError() << "#attn.sliding_window '" << name
                         << "' must be >= 0 or inf, got " << bound;
  return success();
}

//===----------------------------------------------------------------------===//
// block_sparse
//===----------------------------------------------------------------------===//

/// `<block = [bq, bkv], layout = [[0|1, ...], ...]>`; every row as long as the
/// first.
Attribute BlockSparseMaskAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> block;
  SmallVector<bool> layout;
  int64_t numKvBlocks = -1;
  auto parseRow = [&]() -> ParseResult {
    SMLoc rowLoc = parser.getCurrentLocation();
    int64_t rowLength = 0;
    auto parseEntry = [&]() -> ParseResult {
      SMLoc loc = parser.getCurrentLocation();
      int64_t entry;
      if (parser.parseInteger(entry))
        return failure();
      if (entry != 0 && entry != 1)
        return parser.emitError(loc, "block layout entries must be 0 or 1, got ")
               << entry;
      layout.push_back(entry == 1);
      ++rowLength;
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseEntry))
      return failure();
    if (numKvBlocks < 0)
      numKvBlocks = rowLength;
    else if (rowLength != numKvBlocks)
      return parser.emitError(rowLoc, "block layout row has ")
             << rowLength << " entries but the first row has " << numKvBlocks
             << "; every row needs one entry per key block";
    return success();
  };
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword("block") ||
      parser.parseEqual() || parseIndexList(parser, block) ||
      parser.parseComma() || parser.parseKeyword("layout") ||
      parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRow) ||
      parser.parseGreater())
    return {};
  if (block.size() != 2) {
    parser.emitError(loc, "#attn.block_sparse 'block' must be [block_q, "
                          "block_kv], got ")
        << block.size() << " values";
    return {};
  }
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), block[0], block[1],
                    std::max<int64_t>(numKvBlocks, 0), layout);
}

void BlockSparseMaskAttr::print(AsmPrinter &printer) const {
  printer << "<block = [" << getBlockQ() << ", " << getBlockKv()
          << "], layout = [";
  for (int64_t r = 0, e = getNumQBlocks(); r < e; ++r) {
    if (r)
      printer << ", ";
    printer << '[';
    for (int64_t c = 0; c < getNumKvBlocks(); ++c)
      printer << (c ? ", " : "") << (isBlockKept(r, c) ? 1 : 0);
    printer << ']';
  }
  printer << "]>";
}

LogicalResult
BlockSparseMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t blockQ, int64_t blockKv,
                            int64_t numKvBlocks, ArrayRef<bool> layout) {
  if (failed(verifyPositive(emitError, "block_sparse", "block_q", blockQ)) ||
      failed(verifyPositive(emitError, "block_sparse", "block_kv", blockKv)))
    return failure();
  if (numKvBlocks <= 0 || layout.empty())
    return emitError() << "#attn.block_sparse layout is empty; it needs at "
                          "least one row of one block";
  if (layout.size() % numKvBlocks != 0)
    return emitError() << "#attn.block_sparse layout of " << layout.size()
                       << " entries is not a whole number of rows of "
                       << numKvBlocks;
  return success();
}

attnc::mask::Mask BlockSparseMaskAttr::toMaskRule() const {
  return {attnc::mask::BlockSparse{
      getBlockQ(), getBlockKv(), getNumKvBlocks(),
      std::vector<bool>(getLayout().begin(), getLayout().end())}};
}

//===----------------------------------------------------------------------===//
// longformer, bigbird
//===----------------------------------------------------------------------===//

LogicalResult
LongformerMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t block, int64_t window,
                           ArrayRef<int64_t> global) {
  if (failed(verifyPositive(emitError, "longformer", "block", block)) ||
      failed(verifyNonNegative(emitError, "longformer", "window", window)))
    return failure();
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t g : global) {
    if (g < 0)
      return emitError() << "#attn.longformer global block indices must be "
                            ">= 0, got "
                         << g;
    if (!seen.insert(g).second)
      return emitError() << "#attn.longformer global block " << g
                         << " is listed twice";
  }
  return success();
}

attnc::mask::Mask LongformerMaskAttr::toMaskRule() const {
  return {attnc::mask::Longformer{getBlock(), getWindow(),
                                  std::vector<int64_t>(getGlobal().begin(),
                                                       getGlobal().end())}};
}

LogicalResult
BigBirdMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t block, int64_t window, int64_t global,
                        int64_t random, uint64_t) {
  if (failed(verifyPositive(emitError, "bigbird", "block", block)))
    return failure();
  for (auto [name, value] : {std::pair{"window", window},
                             {"global", global},
                             {"random", random}})
    if (failed(verifyNonNegative(emitError, "bigbird", name, value)))
      return failure();
  // Each random block is a hash per tile classification: thousands made
  // lowering take seconds and memory without bound, and past a few dozen the
  // mask is dense anyway.
  constexpr int64_t kMaxRandom = 64;
  if (random > kMaxRandom)
    return emitError() << "#attn.bigbird 'random' must be at most " << kMaxRandom
                       << " blocks per block row, got " << random;
  return success();
}

attnc::mask::Mask BigBirdMaskAttr::toMaskRule() const {
  return {attnc::mask::BigBird{getBlock(), getWindow(), getGlobal(),
                               getRandom(), getSeed()}};
}

//===----------------------------------------------------------------------===//
// and, or
//===----------------------------------------------------------------------===//

static LogicalResult
verifyComposed(function_ref<InFlightDiagnostic()> emitError, StringRef name,
               ArrayRef<Attribute> masks) {
  if (masks.size() < 2)
    return emitError() << "#attn." << name
                       << " composes two or more masks, got " << masks.size();
  for (auto [i, mask] : llvm::enumerate(masks))
    if (!isa<MaskAttrInterface>(mask))
      return emitError() << "#attn." << name << " operand " << i << " ("
                         << mask
                         << ") is not a mask; expected #attn.full, "
                            "#attn.causal, #attn.sliding_window, "
                            "#attn.block_sparse, #attn.longformer, "
                            "#attn.bigbird, #attn.and or #attn.or";
  return success();
}

LogicalResult AndMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<Attribute> masks) {
  return verifyComposed(emitError, "and", masks);
}

LogicalResult OrMaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<Attribute> masks) {
  return verifyComposed(emitError, "or", masks);
}

static std::vector<attnc::mask::Mask> toMaskRules(ArrayRef<Attribute> masks) {
  std::vector<attnc::mask::Mask> rules;
  for (Attribute m : masks)
    rules.push_back(cast<MaskAttrInterface>(m).toMaskRule());
  return rules;
}

attnc::mask::Mask AndMaskAttr::toMaskRule() const {
  return {attnc::mask::And{toMaskRules(getMasks())}};
}

attnc::mask::Mask OrMaskAttr::toMaskRule() const {
  return {attnc::mask::Or{toMaskRules(getMasks())}};
}
