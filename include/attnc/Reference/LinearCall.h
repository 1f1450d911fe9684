//===- LinearCall.h - calling a compiled linear attention kernel -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Seeded inputs of a linear attention kernel (attn.linear_attention) and its
// call through the runtime's array launch, for attnc-run and attnc-tune.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_LINEARCALL_H
#define ATTNC_REFERENCE_LINEARCALL_H

#include "attnc/Reference/KernelCall.h"
#include "attnc/Reference/Linear.h"

#include <memory>

namespace attnc {

/// The seeded tensors of one call: q, k, v, and with state = carry an
/// initial state (entries in [-1, 1)) and normalizer (in [4, 12): the sums
/// of phi(k) over some earlier keys, positive as elu + 1's are).
struct LinearInputs {
  HostTensor q, k, v, s0, z0;
};

/// `seqKv` keys for a non-causal kernel; a causal one has `seq` of each.
LinearInputs seededLinearInputs(mlir::attn::LinearAttentionOp op, int64_t batch, int64_t seq,
                                int64_t seqKv, uint64_t seed);

/// One call's device tensors: q, k, v and out; with state = carry the
/// initial state and normalizer (null: from zeros) and the final ones.
class LinearTensors {
public:
  LinearTensors(mlir::attn::LinearAttentionOp op, const HostTensor &q, const HostTensor &k,
                const HostTensor &v, const HostTensor *s0, const HostTensor *z0);
  /// Calls the kernel once (its array launch); the error carries
  /// attnc_last_error's text.
  llvm::Error call(const LoadedKernel &kernel, int threads);
  LinearResult toHost() const;

private:
  std::unique_ptr<DeviceTensor> q, k, v, out, state, norm, finalState, finalNorm;
};

} // namespace attnc

#endif // ATTNC_REFERENCE_LINEARCALL_H
