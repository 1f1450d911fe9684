//===- TileClassifier.h - full / partial / empty tiles of a mask -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Which (query tile, key tile) pairs a mask attribute keeps entirely, partly
// or not at all. The rules live in attnc/Support/MaskRules.h, written against
// an abstract "emitter" of index arithmetic; this is their MLIR side: the
// attribute's plain-data rule evaluated on integers (attnc explain, counts)
// or emitted as index arithmetic (the kernel, where sequence lengths are
// run-time values). Both are the same rule, so they can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_TILECLASSIFIER_H
#define ATTNC_TRANSFORMS_TILECLASSIFIER_H

#include "attnc/Support/MaskRules.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn {

using ::attnc::mask::TileBounds;
using ::attnc::mask::TileClass;

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
/// tables (memref.global) in `module`: a builtin.module, or the gpu.module of
/// device code.
std::pair<Value, Value> emitTileClass(OpBuilder &b, Location loc,
                                      Operation *module, Attribute mask,
                                      bool hasMaskMod,
                                      const TileBounds<Value> &tile);

/// Emits the key range [lo, hi) outside which query rows [q0, q1) keep
/// nothing (MaskRules' keyRange; may reach outside [0, seqKv)).
std::pair<Value, Value> emitKeyRange(OpBuilder &b, Location loc, Attribute mask,
                                     Value q0, Value q1, Value seqQ, Value seqKv);

/// Whether emitMaskKeepsVector handles the mask: windows, full and their
/// and / or compositions (no block patterns).
bool canEmitMaskKeepsVector(Attribute mask);

/// Emits "mask attribute keeps (q, kv)" lane by lane: q and kv are vectors of
/// `index` positions, the result a vector of i1; seqQ, seqKv are scalars.
Value emitMaskKeepsVector(OpBuilder &b, Location loc, Attribute mask, Value q,
                          Value kv, Value seqQ, Value seqKv);

/// Emits the i1 "mask attribute keeps (q, kv)" for run-time positions.
Value emitMaskKeeps(OpBuilder &b, Location loc, Operation *module,
                    Attribute mask, Value q, Value kv, Value seqQ, Value seqKv);

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_TILECLASSIFIER_H
