//===- TileClassifier.h - full / partial / empty tiles of a mask -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Which (query tile, key tile) pairs a mask keeps entirely, partly or not at
// all. The rules are written once, against an abstract "emitter" of index
// arithmetic, and instantiated twice: on integers (attnc explain, tests) and
// on MLIR values (the kernel, where sequence lengths are run-time values).
// The two can therefore never disagree.
//
// Rules: windows are classified exactly from the tile bounds; block-pattern
// masks (block_sparse, longformer, bigbird) by visiting the blocks a tile
// covers; `and` is full when every operand is full and empty when any is;
// `or` the reverse; a mask_mod turns full into partial.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_TILECLASSIFIER_H
#define ATTNC_TRANSFORMS_TILECLASSIFIER_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn {

enum class TileClass { empty, partial, full };

/// A tile: query rows [q0, q1) and key rows [k0, k1), both non-empty and
/// already clipped to the sequence lengths.
template <typename Int> struct TileBounds {
  Int q0, q1, k0, k1, seqQ, seqKv;
};

/// Classifies one tile of a normalized mask for concrete lengths.
TileClass classifyTile(Attribute mask, bool hasMaskMod,
                       const TileBounds<int64_t> &tile);

/// Whether the mask attribute alone keeps position (q, kv): the 1 x 1 tile.
bool maskKeeps(Attribute mask, int64_t q, int64_t kv, int64_t seqQ,
               int64_t seqKv);

/// (q, kv) pairs the mask attribute keeps for these lengths: whole tiles where
/// they are full or empty, element by element only inside partial tiles.
int64_t countKeptPairs(Attribute mask, int64_t seqQ, int64_t seqKv);

/// Emits index arithmetic computing (isFull, isEmpty) as i1 values for a tile
/// with run-time bounds (all of `index` type). Block layouts become constant
/// tables (memref.global) in `module`.
std::pair<Value, Value> emitTileClass(OpBuilder &b, Location loc,
                                      ModuleOp module, Attribute mask,
                                      bool hasMaskMod,
                                      const TileBounds<Value> &tile);

/// Emits the i1 "mask attribute keeps (q, kv)" for run-time positions.
Value emitMaskKeeps(OpBuilder &b, Location loc, ModuleOp module,
                    Attribute mask, Value q, Value kv, Value seqQ, Value seqKv);

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_TILECLASSIFIER_H
