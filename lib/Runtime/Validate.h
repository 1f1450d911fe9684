//===- Validate.h - Checks launch arguments against a kernel ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime. validateLaunch reads the descriptor and the DLPack
// tensors, never their elements, and boils them down to what a launch needs:
// sizes, element strides and the extent of each flat view.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_VALIDATE_H
#define ATTNC_LIB_RUNTIME_VALIDATE_H

#include "attnc/Runtime/attnc_runtime.h"

#include <cstdint>
#include <string>

namespace attnc::rt {

/// The tensors of a launch, in argument order.
enum TensorId { Q = 0, K, V, Out, Lse, NumTensors };

/// One tensor as a flat view: `base` is data + byte_offset, and elements
/// [0, size) cover everything its shape and strides reach. Elements are of
/// the tensor's dtype (tensorDtype), so `base` is untyped; size and strides
/// count elements, strides in logical (batch, head, seq) order whatever the
/// layout; the head_dim stride is 1.
struct TensorView {
  void *base = nullptr;
  int64_t size = 0;
  int64_t strides[3] = {0, 0, 0};
};

/// What a launch needs once its arguments passed every check.
struct CheckedLaunch {
  int64_t batch = 0, seqQ = 0, seqKV = 0;
  int64_t deviceId = 0; // the tensors' DLDevice id
  int64_t tiles = 0; // query tiles per (batch, head)
  int64_t items = 0; // batch * num_heads * tiles
  bool hasLse = false;
  TensorView views[NumTensors]; // views[Lse] is empty without hasLse
};

/// Checks, in this order, stopping at the first failure: the descriptor
/// (ABI), presence of tensors and data (NULL), devices (DEVICE), dtypes
/// (DTYPE), ranks and shapes (SHAPE), max_seq and work-item count (LIMIT),
/// strides, byte_offset and extents (STRIDE). Fills `launch` and returns
/// ATTNC_OK, or returns the status and sets `message`.
///
/// `lse` is only looked at when the descriptor says the kernel outputs it;
/// otherwise it is ignored, whatever it is, and never written.
attnc_status validateLaunch(const attnc_kernel_desc *desc, const DLTensor *q,
                            const DLTensor *k, const DLTensor *v,
                            const DLTensor *out, const DLTensor *lse,
                            CheckedLaunch &launch, std::string &message);

/// The element type of the kernel's q, k, v and out, from its dtype_code and
/// dtype_bits.
DLDataType kernelDtype(const attnc_kernel_desc &desc);

/// The element type tensor `id` must have: the kernel's dtype, except lse,
/// which is float32 for every kernel: it is the f32 softmax statistics'
/// result, and callers that merge partial attentions need its precision.
DLDataType tensorDtype(const attnc_kernel_desc &desc, TensorId id);

/// The descriptor's name for messages, which may be NULL in a hand-written one.
const char *kernelName(const attnc_kernel_desc &desc);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_VALIDATE_H
