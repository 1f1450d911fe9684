//===- Validate.h - Checks launch arguments against a kernel ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime. validateLaunch reads the descriptor's tables and the
// DLPack tensors, never their elements, and boils them down to what a launch
// needs: the symbols' values, the params array, each tensor's flat view and
// each phase's work items. It knows no kernel family: every size, tensor and
// phase comes from the tables (kernel interface v2).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_VALIDATE_H
#define ATTNC_LIB_RUNTIME_VALIDATE_H

#include "Tables.h"

#include <cstdint>
#include <string>

namespace attnc::rt {

/// One tensor argument as a flat view: `base` is data + byte_offset, and
/// elements [0, size) cover everything its shape and strides reach. Elements
/// are of the tensor's dtype, so `base` is untyped; strides count elements.
/// An argument the tables do not list, or an empty tensor, has size 0.
struct TensorView {
  void *base = nullptr;
  int64_t size = 0;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

/// One phase's work items: the extents of its index space, outermost first.
struct PhaseItems {
  int rank = 0;
  int64_t extents[kMaxRank] = {};
  int64_t items = 0; // their product
};

/// What a launch needs once its arguments passed every check.
struct CheckedLaunch {
  int64_t symbols[kMaxSymbols] = {}; // every symbol's value
  int64_t deviceId = 0;              // the tensors' DLDevice id
  int64_t params[kMaxParams] = {};
  TensorView views[kMaxArgs];        // by argument position
  PhaseItems phases[kMaxPhases];
  int64_t totalItems = 0;            // over every phase
  int reducedZero = -1;              // a REDUCED symbol that is 0, or -1
  uintptr_t scratchBytes = 0;        // the scratch tensors' block (views: offsets in it)
  Tables tables;                     // the descriptor's tables, parsed
};

/// Checks, in this order, stopping at the first failure: the descriptor and
/// its tables (ABI), the CPU's features (CPU), presence of tensors and data
/// (NULL), devices (DEVICE), dtypes (DTYPE), ranks and shapes (SHAPE), the
/// bounds of the symbols the shapes bind (LIMIT), strides, byte_offset and
/// extents (STRIDE), outputs' addresses (ALIAS), the entries of int32
/// lengths, tables and offsets (INDEX; the bounds of the symbols offsets bind:
/// LIMIT), work-item counts and working memory (LIMIT). Fills `launch` and returns
/// ATTNC_OK, or returns the status and sets `message`. A device kernel's
/// int32 entries are copied to the host on `stream` (the call waits). `args` has
/// desc->num_args entries once the descriptor is checked; an argument the
/// tables do not list is never looked at.
attnc_status validateLaunch(const attnc_kernel_desc *desc, const DLTensor *const *args,
                            CheckedLaunch &launch, std::string &message,
                            void *stream = nullptr);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_VALIDATE_H
