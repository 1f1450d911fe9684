//===- MaskModIntervals.h - a mask_mod over a whole tile -------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Interval analysis of a mask_mod body: evaluated once over a tile's index
// ranges (b and h fixed, q in [q0, q1), kv in [k0, k1)) instead of once per
// element, it says whether the body keeps every pair of the tile (always),
// none (never), or cannot tell (unknown). Sound by construction: every
// transfer function over-approximates the values the op can take, so a tile
// called always or never is so for every element; whatever the analysis
// cannot follow (floats, unsigned ops on ranges that may be negative,
// overflow) widens to "any value". A body that may trap on the tile (an
// integer division or remainder whose divisor range holds 0, a float to
// integer conversion) is unknown: skipping its tile would drop the error a
// per-element evaluation reports.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_MASKMODINTERVALS_H
#define ATTNC_TRANSFORMS_MASKMODINTERVALS_H

#include "attnc/Support/MaskRules.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <functional>
#include <optional>

namespace attnc {

/// Inclusive bounds of an index argument over a tile.
struct IndexRange {
  int64_t lo, hi;
  static IndexRange point(int64_t v) { return {v, v}; }
  /// [begin, end): the rows or columns of a tile.
  static IndexRange span(int64_t begin, int64_t end) { return {begin, end - 1}; }
};

enum class TileVerdict { Never, Always, Unknown };

/// The values an input holds over a box of indices (one range per dim): the
/// least and greatest, or none where the box leaves the input.
using LoadValuesFn = std::function<std::optional<IndexRange>(llvm::StringRef input,
                                                             llvm::ArrayRef<IndexRange> box)>;

/// What `maskMod` (a verified mask_mod body: (b, h, q, kv) -> i1) yields over
/// every element of the tile b x h x q x kv. The ranges must not be empty.
/// A body that reads inputs (attn.load) is decided from `loadValues`, the
/// inputs' values; without them it is unknown.
TileVerdict classifyMaskModTile(mlir::Region &maskMod, IndexRange b, IndexRange h,
                                IndexRange q, IndexRange kv,
                                const LoadValuesFn &loadValues = nullptr);

/// A value's bounds over a tile (`any`: not followed, every value of its type;
/// an i1's are 0 / 1).
struct ValueBounds {
  bool any;
  int64_t lo, hi;
};

/// Every argument's and op result's bounds over the tile, into `bounds`;
/// false where the body may trap on it.
bool boundMaskModValues(mlir::Region &maskMod, IndexRange b, IndexRange h, IndexRange q,
                        IndexRange kv, llvm::DenseMap<mlir::Value, ValueBounds> &bounds);

/// What an attn.load reads over a box of indices (one inclusive [lo, hi]
/// index pair per dim): bounds of the values (index, sign-extended) and
/// whether every index of the box lies inside the input; a verdict counts
/// only then (outside, the element path reports the error).
struct LoadRange {
  mlir::Value lo, hi, inside;
};
using LoadRangeFn = llvm::function_ref<LoadRange(
    mlir::Operation *load, llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> box)>;

/// Whether the kernels can classify tiles by `maskMod` at run time
/// (emitMaskModVerdict): its ops are of the subset the emitter follows, and
/// over the widest tile a kernel is called with (positions below 2^40) no
/// value overflows, no division may trap, and each op's static conditions
/// hold (positive constant divisors, non-negative unsigned operands).
bool canEmitMaskModVerdict(mlir::Region &maskMod);

/// Emits (always, never), two i1 values: whether `maskMod` keeps every pair,
/// or none, of the tile batch x [headLo, headHi] x [q0, q1) x [k0, k1)
/// (index values; q1 > q0, k1 > k0). Both are false where seqQ or seqKv
/// reach 2^40 (past what canEmitMaskModVerdict proved). The same transfer
/// functions as classifyMaskModTile, emitted as index arithmetic; an
/// attn.load's values come from `loadRange` (none given: any value, no
/// verdict).
std::pair<mlir::Value, mlir::Value>
emitMaskModVerdict(mlir::OpBuilder &b, mlir::Location loc, mlir::Region &maskMod,
                   mlir::Value batch, mlir::Value headLo, mlir::Value headHi, mlir::Value q0,
                   mlir::Value q1, mlir::Value k0, mlir::Value k1, mlir::Value seqQ,
                   mlir::Value seqKv, LoadRangeFn loadRange = nullptr);

/// (full, empty) of a kernel's tile: the mask attribute's class
/// (emitTileClass) and, with a mask_mod the kernels classify
/// (canEmitMaskModVerdict), its verdict over batch x [headLo, headHi] x the
/// tile: keeps nothing, the tile is empty; keeps every pair, the attribute's
/// class stands. Any other mask_mod makes each tile the attribute keeps
/// partial (masked per element).
std::pair<mlir::Value, mlir::Value>
emitTileClassWithMaskMod(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *module,
                         mlir::Attribute mask, mlir::Region &maskMod,
                         const mask::TileBounds<mlir::Value> &tile, mlir::Value batch,
                         mlir::Value headLo, mlir::Value headHi,
                         LoadRangeFn loadRange = nullptr);

} // namespace attnc

#endif // ATTNC_TRANSFORMS_MASKMODINTERVALS_H
