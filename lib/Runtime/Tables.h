//===- Tables.h - A kernel descriptor's tables, parsed and checked -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime. The descriptor's symbol, tensor and phase tables
// (kernel interface v2) name symbols by string; checkTables resolves every
// name once per launch into indices and checks that the tables describe a
// launch the runtime can run, so that the checks of the tensors and the
// scheduling of the phases work on numbers only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_TABLES_H
#define ATTNC_LIB_RUNTIME_TABLES_H

#include "attnc/Runtime/attnc_runtime.h"

#include <cstdint>
#include <string>

namespace attnc::rt {

/// The tables' bounds: a descriptor beyond them is malformed.
constexpr int kMaxSymbols = 32, kMaxTensors = 32, kMaxArgs = 32, kMaxPhases = 8;
constexpr int kMaxRank = 8, kMaxParams = 96;

/// One entry of a comma-separated list: a symbol, symbol / divisor (phase
/// items) or scale * symbol + constant (dims: "batch+1", the offsets of a
/// batch; "2*seq_kv-1", a relative-position table a mod reads).
struct Term {
  int symbol = -1;
  int divisor = -1; // a fixed symbol >= 1, or -1 for none
  int plus = 0;     // -kMaxPlus to kMaxPlus
  int scale = 1;    // 1 to kMaxScale
  /// A dim an earlier tensor must bind: extents do not invert it.
  bool derived() const { return scale != 1 || plus < 0; }
};

/// The largest constant a dim adds to (or takes from) its symbol, and the
/// largest factor.
constexpr int kMaxPlus = 64, kMaxScale = 64;

struct TensorShape {
  int rank = 0;
  int dims[kMaxRank] = {};        // symbol of each dimension
  int dimsPlus[kMaxRank] = {};    // ... plus this constant
  int dimsScale[kMaxRank] = {};   // ... times this factor, before the constant
  int numStrides = 0;
  int strideDims[kMaxRank] = {};  // dimensions whose strides go into params
  int sameAs = -1;                // an earlier tensor with the same dims
  /// An int32 tensor's `bound`: entries in [0, product of these symbols),
  /// or [0, product] when inclusive; numBound 0: no bound.
  int numBound = 0;
  int boundSymbols[kMaxRank] = {};
  bool boundInclusive = false;
  /// "...;steps<=S": entries non-decreasing (offsets), each step at most
  /// symbol S, which the largest step binds unless a dim bound it before.
  int stepSymbol = -1;
  /// "...;each<=steps(T)": entry b at most T[b + 1] - T[b], T an earlier
  /// offsets tensor (a sequence's used keys within its span).
  int withinSteps = -1;
  /// A dim is a symbol that offsets' steps bind (a mod input [batch, seq_kv]
  /// of a varlen kernel): the shape is checked once the entries are read.
  bool afterSteps = false;
};

struct Tables {
  TensorShape tensors[kMaxTensors];
  int phaseRank[kMaxPhases] = {};
  Term phaseItems[kMaxPhases][kMaxRank];
  int boundBy[kMaxSymbols] = {}; // the first tensor with a bound symbol's dim (or steps)
  bool bySteps[kMaxSymbols] = {}; // bound by an offsets tensor's steps, not by a dim
  int numViews = 0;              // arguments, then scratch tensors
};

inline bool isScratch(const attnc_tensor_desc &t) { return t.flags & ATTNC_TENSOR_SCRATCH; }

/// Resolves and checks `desc`'s tables into `tables`: "" if they are sound,
/// else what is wrong (a corrupt or hand-made descriptor: attnc writes sound
/// ones).
std::string checkTables(const attnc_kernel_desc &desc, Tables &tables);

/// The descriptor's name for messages, which may be NULL in a hand-written one.
const char *kernelName(const attnc_kernel_desc &desc);

/// The element type tensor `t` must have.
DLDataType tensorDtype(const attnc_tensor_desc &t);

/// The name messages give coordinate `i` of `phase`'s work items.
std::string indexName(const attnc_phase_desc &phase, int i);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_TABLES_H
