//===- EvalContext.h - what the two reference evaluations share -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Reference. The untiled evaluation (Evaluator.cpp) and the
// tile-by-tile evaluation of attn.flash (FlashEvaluator.cpp) take every
// per-pair fact from here: the score of (b, h, i, j) with score_mod applied,
// whether the mask attribute and mask_mod keep it, the rows of v, and how a
// row's softmax state becomes out and lse. They therefore differ only in the
// order of computation, which is what the tiled-vs-untiled test checks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_REFERENCE_EVALCONTEXT_H
#define ATTNC_LIB_REFERENCE_EVALCONTEXT_H

#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/ModInterpreter.h"

#include <limits>
#include <optional>

namespace attnc::detail {

llvm::Error error(const llvm::Twine &message);

/// Row-major offset of (b, h, s, 0) in a 4-d tensor of the given layout.
struct LayoutIndexer {
  mlir::attn::Layout layout;
  int64_t heads, seq, dim;
  int64_t operator()(int64_t b, int64_t h, int64_t s) const {
    if (layout == mlir::attn::Layout::bhsd)
      return ((b * heads + h) * seq + s) * dim;
    return ((b * seq + s) * heads + h) * dim;
  }
};

/// Infers the problem size from q and k, then checks all three shapes.
llvm::Expected<ProblemSize> inferSize(mlir::attn::AttentionSpecOpInterface op,
                                      const HostTensor &q, const HostTensor &k,
                                      const HostTensor &v);

class EvalContext {
public:
  EvalContext(mlir::attn::AttentionSpecOpInterface op, const ProblemSize &size,
              const HostTensor &q, const HostTensor &k, const HostTensor &v,
              const ModInputs *inputs);

  /// The outputs the spec asks for, zeroed; weights also when `wantWeights`.
  ReferenceResult allocateOutputs(bool wantWeights);

  /// Whether the mask attribute and mask_mod keep (i, j) for head h of batch b.
  llvm::Expected<bool> keeps(int64_t b, int64_t h, int64_t i, int64_t j);
  /// score_mod(scale * q_i . k_j, b, h, i, j), in double.
  llvm::Expected<double> score(int64_t b, int64_t h, int64_t i, int64_t j) {
    llvm::Expected<std::pair<double, double>> s = scoreAndSlope(b, h, i, j);
    if (!s)
      return s.takeError();
    return s->first;
  }
  /// The score and its derivative with respect to scale * q_i . k_j (1
  /// without a score_mod).
  llvm::Expected<std::pair<double, double>> scoreAndSlope(int64_t b, int64_t h, int64_t i,
                                                          int64_t j);
  /// scoreAndSlope where the masks keep (i, j), else (-inf, 0).
  llvm::Expected<std::pair<double, double>> keptScore(int64_t b, int64_t h, int64_t i,
                                                      int64_t j) {
    llvm::Expected<bool> kept = keeps(b, h, i, j);
    if (!kept)
      return kept.takeError();
    if (!*kept)
      return std::pair{-std::numeric_limits<double>::infinity(), 0.0};
    return scoreAndSlope(b, h, i, j);
  }
  /// For each float attn.load of score_mod: fn(input name, the flat index
  /// of the element it reads at (b, h, i, j), d score / d element).
  using InputSlopeFn = llvm::function_ref<void(llvm::StringRef, int64_t, double)>;
  llvm::Error inputSlopes(int64_t b, int64_t h, int64_t i, int64_t j, InputSlopeFn fn);
  /// score_mod's float results unrounded (ModInterpreter::setExact).
  void setExact() {
    if (scoreMod)
      scoreMod->setExact(true);
  }
  /// Where row (b, h, i) of q (and out) and row (b, kv head of h, j) of k (and
  /// v) start in their tensors.
  int64_t queryRow(int64_t b, int64_t h, int64_t i) const { return qIndex(b, h, i); }
  int64_t keyRow(int64_t b, int64_t h, int64_t j) const { return kvIndex(b, h / group, j); }
  double scoreScale() const { return scale; }
  /// Row j of v for query head h (its key/value head under GQA).
  const double *valueRow(int64_t b, int64_t h, int64_t j) const {
    return &v.data[kvIndex(b, h / group, j)];
  }

  /// Writes row (b, h, i) of out and lse from a finished softmax: max m, sum
  /// l of exp(s - m), acc = sum exp(s - m) v. l == 0 means nothing was kept:
  /// out 0, lse -inf.
  void storeRow(ReferenceResult &result, int64_t b, int64_t h, int64_t i,
                double m, double l, llvm::ArrayRef<double> acc) const;

  /// The mask attribute's rule, built once: per-element keeps through the
  /// attribute would rebuild it for every pair.
  const attnc::mask::Mask &maskRule() const { return rule; }

  const ProblemSize size;
  const int64_t heads, dim;

private:
  mlir::attn::AttentionSpecOpInterface op;
  const HostTensor &q, &k, &v;
  attnc::mask::Mask rule;
  LayoutIndexer qIndex, kvIndex;
  std::optional<ModInterpreter> scoreMod, maskMod;
  const ModInputs *inputs; // checked against the spec (checkModInputs)
  const HostTensor *additive = nullptr; // additive scores' v, [head_dim] or [heads, head_dim]
  llvm::Expected<Scalar> load(llvm::StringRef name, llvm::ArrayRef<int64_t> at) const;
  llvm::SmallVector<mlir::Operation *> floatLoads; // score_mod's, in body order
  /// score_mod(scale q_i . k_j, ...) (the scaled dot without one), deriving
  /// with respect to the score where `seedScore`.
  llvm::Expected<Scalar> runScoreMod(int64_t b, int64_t h, int64_t i, int64_t j, bool seedScore);
  int64_t group; // query heads per key/value head
  double scale;
};

} // namespace attnc::detail

#endif // ATTNC_LIB_REFERENCE_EVALCONTEXT_H
