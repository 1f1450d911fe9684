//===- ModInputs.h - the input tensors mod bodies read ----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A spec's `inputs` (#attn.input entries) and their dims. A dim is an affine
// expression of one kernel symbol, `[S*]symbol[+C|-C]`, kept as that text:
// the same text is the dim the kernel descriptor's tensor table gives the
// runtime, which checks the launch's tensors against it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTN_MODINPUTS_H
#define ATTNC_DIALECT_ATTN_MODINPUTS_H

#include "attnc/Dialect/Attn/AttnOps.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// The most inputs a spec declares, a dim's largest scale and offset, and
/// its largest constant.
constexpr int64_t kMaxModInputs = 8, kMaxDimScale = 64, kMaxDimOffset = 64,
                  kMaxDimConstant = (int64_t(1) << 31) - 1;

/// scale * symbol + offset, or the constant `offset` when symbol is empty
/// (a table of 257 relative positions).
struct DimExpr {
  std::string symbol;
  int64_t scale = 1, offset = 0;
  bool isConstant() const { return symbol.empty(); }
  /// "2*seq_kv-1", "batch", "seq_q+1", "257": the descriptor's spelling (a
  /// constant is a fixed symbol of that name there).
  std::string text() const;
  /// The extent for a value of the symbol (never below 0).
  int64_t extent(int64_t value) const;
};

/// The dim `text` (as text() writes it), or none if it is not one.
std::optional<DimExpr> parseDimExpr(StringRef text);

/// The symbols a dim may name, for messages: "batch, heads, ...".
StringRef inputDimSymbols();

/// `symbol`'s value where the spec fixes it (heads, kv_heads, head_dim).
std::optional<int64_t> fixedSymbol(AttentionSpecOpInterface spec, StringRef symbol);
/// `d`'s extent where the spec fixes it (a constant, or of a fixed symbol).
std::optional<int64_t> staticExtent(AttentionSpecOpInterface spec, const DimExpr &d);

/// The input named `name` among `inputs` (null when none is).
ModInputAttr findModInput(ArrayAttr inputs, StringRef name);

/// Parses `[name: type [dims], ...]` into an ArrayAttr of #attn.input.
ParseResult parseModInputs(OpAsmParser &parser, ArrayAttr &inputs);
/// Prints what parseModInputs reads.
void printModInputs(OpAsmPrinter &p, ArrayAttr inputs);

/// Checks a spec's inputs: names, types, dims, count, and the kernels that
/// take them.
LogicalResult verifyModInputs(AttentionSpecOpInterface spec);

} // namespace mlir::attn

#endif // ATTNC_DIALECT_ATTN_MODINPUTS_H
