//===- Evaluator.h - the reference semantics of attn specs -----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The executable statement of the attn dialect's semantics, in double:
// evaluateReference runs plain loops over (batch, head, query row), no
// tiling, and every backend is checked against it; evaluateFlash runs an
// attn.flash tile by tile with the online softmax of its description, so a
// test can show that the tiled form means the same as the spec.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_EVALUATOR_H
#define ATTNC_REFERENCE_EVALUATOR_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/HostTensor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// The run-time sizes of one call.
struct ProblemSize {
  int64_t batch = 1, seqQ = 1, seqKv = 1;
  /// The batch index mods see for batch 0: a sequence evaluated alone (a
  /// varlen or kv_cache call, one sequence at a time) keeps its index.
  int64_t firstBatch = 0;
};

/// Shape of q / out (`isQuery`) or of k / v in the spec's layout.
llvm::SmallVector<int64_t, 4> tensorShape(mlir::attn::AttentionSpecOpInterface op,
                                          const ProblemSize &size, bool isQuery);

/// Rejects sizes the spec does not allow: non-positive lengths, lengths over
/// max_seq, sequences longer than a block layout covers.
llvm::Error checkProblemSize(mlir::attn::AttentionSpecOpInterface op,
                             const ProblemSize &size);

/// Rejects sizes whose seeded tensors cannot fit in this machine's memory, with
/// the figure: the tools' LLVM turns a failed allocation into an abort ("LLVM
/// ERROR: out of memory"), not an error. Counts q, k, v and out twice: as the
/// reference's doubles and as a kernel's buffers (at most 4 bytes an element).
llvm::Error checkFitsInMemory(mlir::attn::AttentionSpecOpInterface op,
                              const ProblemSize &size);

/// (batch, head, query tile, KV tile) visits of a tiled evaluation, by the
/// class the mask's tile rule gives them.
/// The input tensors a spec's mods read (its `inputs`), by name: i32 or f32
/// values in the shapes the spec's dims give for the call's sizes.
using ModInputs = llvm::StringMap<HostTensor>;

/// The shape input `decl` has for `size`.
llvm::SmallVector<int64_t, 4> modInputShape(mlir::attn::AttentionSpecOpInterface op,
                                            mlir::attn::ModInputAttr decl,
                                            const ProblemSize &size);

/// Checks that `inputs` holds each of the spec's inputs, of its type and
/// shape for `size`, and nothing else.
llvm::Error checkModInputs(mlir::attn::AttentionSpecOpInterface op, const ProblemSize &size,
                           const ModInputs &inputs);

struct TileCounts {
  int64_t full = 0, partial = 0, empty = 0;
  /// Tiles whose scores were computed; empty ones are skipped.
  int64_t visited() const { return full + partial; }
};

struct ReferenceResult {
  HostTensor out;      // spec dtype, q's layout; when outputs has `out`
  HostTensor lse;      // f32 [batch, heads, seq_q]; when outputs has `lse`
  HostTensor weights;  // f32 [batch, heads, seq_q, seq_kv]; when asked for
  int64_t keptPairs = 0; // (b, h, i, j) entries the masks keep
  TileCounts tiles;      // evaluateFlash only
};

/// Evaluates the spec `op` (an attn.attention, or the parameters of an
/// attn.flash, untiled) on q, k, v (spec dtype and layout; sizes inferred
/// from them). `wantWeights` computes the weights even when the spec does not
/// output them (for pictures); the caller bounds their size.
/// `firstBatch` is the index mods see for q's batch 0 (ProblemSize).
/// `inputsSize`: the sizes `inputs` are shaped for where they are not the
/// call's (a sequence evaluated alone: the whole batch, the longest lengths).
llvm::Expected<ReferenceResult>
evaluateReference(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q,
                  const HostTensor &k, const HostTensor &v,
                  bool wantWeights = false, int64_t firstBatch = 0,
                  const ModInputs *inputs = nullptr, const ProblemSize *inputsSize = nullptr);

/// Evaluates `op` tile by tile, block_q x block_kv, following the recurrence
/// of its description: tiles classified by the mask's tile rule, empty tiles
/// skipped, masks evaluated per element in partial tiles only, running max,
/// sum and accumulator in double. Same inputs and outputs as
/// evaluateReference, without weights.
llvm::Expected<ReferenceResult> evaluateFlash(mlir::attn::FlashOp op,
                                              const HostTensor &q,
                                              const HostTensor &k,
                                              const HostTensor &v,
                                              const ModInputs *inputs = nullptr);

} // namespace attnc

#endif // ATTNC_REFERENCE_EVALUATOR_H
