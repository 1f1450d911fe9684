//===- Evaluator.h - the reference semantics of attn specs -----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The executable statement of the attn dialect's semantics: plain loops over
// (batch, head, query row), double accumulation, no tiling. Every backend is
// checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_EVALUATOR_H
#define ATTNC_REFERENCE_EVALUATOR_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// The run-time sizes of one call.
struct ProblemSize {
  int64_t batch = 1, seqQ = 1, seqKv = 1;
};

/// Shape of q / out (`isQuery`) or of k / v in the spec's layout.
llvm::SmallVector<int64_t, 4> tensorShape(mlir::attn::AttentionOp op,
                                          const ProblemSize &size, bool isQuery);

/// Rejects sizes the spec does not allow: non-positive lengths, lengths over
/// max_seq, sequences longer than a block layout covers.
llvm::Error checkProblemSize(mlir::attn::AttentionOp op, const ProblemSize &size);

struct ReferenceResult {
  HostTensor out;      // spec dtype, q's layout; when outputs has `out`
  HostTensor lse;      // f32 [batch, heads, seq_q]; when outputs has `lse`
  HostTensor weights;  // f32 [batch, heads, seq_q, seq_kv]; when asked for
  int64_t keptPairs = 0; // (b, h, i, j) entries the masks keep
};

/// Evaluates `op` on q, k, v (spec dtype and layout; sizes inferred from
/// them). `wantWeights` computes the weights even when the spec does not
/// output them (for pictures); the caller bounds their size.
llvm::Expected<ReferenceResult> evaluateReference(mlir::attn::AttentionOp op,
                                                  const HostTensor &q,
                                                  const HostTensor &k,
                                                  const HostTensor &v,
                                                  bool wantWeights = false);

} // namespace attnc

#endif // ATTNC_REFERENCE_EVALUATOR_H
