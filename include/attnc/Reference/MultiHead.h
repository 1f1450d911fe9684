//===- MultiHead.h - the reference semantics of multi-head attention -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attn.multihead_attention evaluated in double: the packed projection of
// every token, the body's attention by evaluateReference on its q, k and v,
// and the output projection.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_MULTIHEAD_H
#define ATTNC_REFERENCE_MULTIHEAD_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// A multi-head attention's parameters, in its dtype and weight layout; an
/// empty bias is none.
struct ProjectionWeights {
  HostTensor inWeight, inBias, outWeight, outBias;
};

/// Shapes of in_proj_weight and out_proj_weight in `op`'s weight layout,
/// and of the biases.
llvm::SmallVector<int64_t, 2> inWeightShape(mlir::attn::MultiHeadAttentionOp op);
llvm::SmallVector<int64_t, 2> outWeightShape(mlir::attn::MultiHeadAttentionOp op);
int64_t qkvWidth(mlir::attn::MultiHeadAttentionOp op);

struct MultiHeadResult {
  HostTensor out;        // [batch, seq, embed_dim], rounded to the dtype
  int64_t keptPairs = 0; // (b, h, i, j) the attention's masks keep
};

/// out of `op` on x [batch, seq, embed_dim] (its dtype); with key_padding =
/// lengths, `keyLengths` [batch] (each in [0, seq]) the keys each sequence
/// attends (a row with none is 0).
llvm::Expected<MultiHeadResult> evaluateMultiHead(mlir::attn::MultiHeadAttentionOp op,
                                             const HostTensor &x,
                                             const ProjectionWeights &weights,
                                             llvm::ArrayRef<int32_t> keyLengths = {});

} // namespace attnc

#endif // ATTNC_REFERENCE_MULTIHEAD_H
