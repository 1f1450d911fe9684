//===- Backward.h - the reference gradients of attention --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gradients of a spec's `out` with respect to q, k and v, in double: the
// statement the backward kernels (issue 40) are checked against, as
// evaluateReference is for the forward ones. For each row (b, h, i), with
// P the softmax of the kept scores s_j = score_mod(t_j), t_j = scale q_i.k_j,
// and dO the row of d_out:
//
//   dP_j = dO . v_j,   D = sum_j P_j dP_j (= dO . out_i) - dlse_i,
//   dt_j = P_j (dP_j - D) * d score_mod / d t (at t_j),
//   dq_i += scale sum_j dt_j k_j,  dk_j += scale dt_j q_i,  dv_j += P_j dO
//
// and for each element x of an f32 mod input that score_mod reads at
// (b, h, i, j): dx += P_j (dP_j - D) * d score_mod / d x.
//
// (under GQA, dk and dv of a key/value head sum over its group of query
// heads). Masked pairs and rows with nothing kept contribute nothing;
// score_mod's derivative comes from the interpreter's forward mode, exact
// (its float results are not rounded here). lse's gradient dlse (from a
// loss through the forward's lse, optional) adds P_j dlse_i to dt_j / slope:
// it enters through D alone.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_BACKWARD_H
#define ATTNC_REFERENCE_BACKWARD_H

#include "attnc/Reference/Evaluator.h"

namespace attnc {

struct BackwardResult {
  HostTensor dq, dk, dv; // the shapes and layout of q, k, v; in double, not rounded
  HostTensor out;        // the forward's out, in double, not rounded
  HostTensor lse;        // the forward's lse [batch, heads, seq_q], -inf where nothing is kept
  ModInputs dInputs;     // each f32 mod input's gradient (its shape), by name
  int64_t keptPairs = 0; // (b, h, i, j) entries the masks keep
};

/// The gradients of `op`'s out on q, k, v (its dtype and layout) for the
/// loss gradients `dOut` (out's shape) and `dLse` (lse's, [batch, heads,
/// seq_q]; null: none), with the spec's mod inputs. Specs of packed
/// sequences or KV caches (varlen, kv_cache) are refused.
llvm::Expected<BackwardResult> evaluateBackward(mlir::attn::AttentionSpecOpInterface op,
                                                const HostTensor &q, const HostTensor &k,
                                                const HostTensor &v, const HostTensor &dOut,
                                                const ModInputs *inputs = nullptr,
                                                const HostTensor *dLse = nullptr);

} // namespace attnc

#endif // ATTNC_REFERENCE_BACKWARD_H
