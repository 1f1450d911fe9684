//===- Linear.h - the reference semantics of linear attention ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.linear_attention evaluated in double from its definition, without
// chunks: each row's phi(q_i) . phi(k_j) over the keys it sees (every key,
// or j <= i), then its weighted sum of values and their normalizer, plus
// the initial state's terms. The kernels fold keys into a state chunk by
// chunk; this evaluates pair by pair, so the two share no structure.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_LINEAR_H
#define ATTNC_REFERENCE_LINEAR_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

namespace attnc {

struct LinearResult {
  HostTensor out;                    // spec dtype, q's layout, value_dim rows
  HostTensor finalState, finalNorm;  // f32 [batch, kv_heads, head_dim(, value_dim)]
};

/// Shapes of a linear kernel's tensors in its layout: q [batch, heads,
/// seq, head_dim] (`query`, value rows: out), k [.., kv_heads, .., head_dim]
/// and v [.., kv_heads, .., value_dim].
llvm::SmallVector<int64_t, 4> linearShape(mlir::attn::LinearAttentionOp op, int64_t batch,
                                          int64_t seq, bool query, bool valueRows);

/// Evaluates `op` on q, k, v (its dtype and layout; sizes from them) from
/// the initial state and normalizer (f32, null for 0; state = carry only).
/// A row whose normalizer plus eps is 0 is 0.
llvm::Expected<LinearResult> evaluateLinear(mlir::attn::LinearAttentionOp op,
                                            const HostTensor &q, const HostTensor &k,
                                            const HostTensor &v,
                                            const HostTensor *initialState = nullptr,
                                            const HostTensor *initialNorm = nullptr);

} // namespace attnc

#endif // ATTNC_REFERENCE_LINEAR_H
