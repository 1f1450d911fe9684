//===- EvalContext.cpp - what the two reference evaluations share ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Scores, masks and output rows in double; outputs are rounded once, to the
// spec dtype (out) and to f32 (lse), when a row is stored.
//
//===----------------------------------------------------------------------===//

#include "EvalContext.h"

#include <cmath>
#include <limits>

using namespace attnc;
using namespace attnc::detail;
using namespace mlir::attn;

llvm::Error attnc::detail::error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<ProblemSize>
attnc::detail::inferSize(AttentionSpecOpInterface op, const HostTensor &q,
                         const HostTensor &k, const HostTensor &v) {
  if (q.shape.size() != 4 || k.shape.size() != 4)
    return error("q and k must be 4-d, got q " + q.shapeString() + " and k " +
                 k.shapeString());
  bool bhsd = op.getLayout() == Layout::bhsd;
  ProblemSize size{q.shape[0], q.shape[bhsd ? 2 : 1], k.shape[bhsd ? 2 : 1]};
  if (llvm::Error err = checkProblemSize(op, size))
    return std::move(err);
  struct Named {
    const char *name;
    const HostTensor &tensor;
    bool isQuery;
  };
  for (const Named &t : {Named{"q", q, true}, Named{"k", k, false},
                         Named{"v", v, false}}) {
    llvm::SmallVector<int64_t, 4> expected = tensorShape(op, size, t.isQuery);
    if (t.tensor.shape != expected)
      return error(llvm::Twine(t.name) + " has shape " + t.tensor.shapeString() +
                   " but the spec (" + stringifyLayout(op.getLayout()) +
                   ") needs " + shapeString(expected));
  }
  return size;
}

EvalContext::EvalContext(AttentionSpecOpInterface op, const ProblemSize &size,
                         const HostTensor &q, const HostTensor &k,
                         const HostTensor &v, const ModInputs *inputs)
    : size(size), heads(op.getHeads()), dim(op.getDim()), op(op), q(q), k(k),
      v(v), rule(op.getMask().toMaskRule()),
      qIndex{op.getLayout(), op.getHeads(), size.seqQ, op.getDim()},
      kvIndex{op.getLayout(), op.getKvHeads(), size.seqKv, op.getDim()},
      inputs(inputs), group(op.getHeads() / op.getKvHeads()), scale(op.getScaleOrDefault()) {
  auto loader = [this](llvm::StringRef name, llvm::ArrayRef<int64_t> at) {
    return load(name, at);
  };
  if (!op.getScoreMod().empty())
    scoreMod.emplace(op.getScoreMod());
  for (mlir::Operation &o : op.getScoreMod().getOps())
    if (llvm::isa<LoadOp>(o) && o.getResult(0).getType().isF32())
      floatLoads.push_back(&o);
  if (!op.getMaskMod().empty())
    maskMod.emplace(op.getMaskMod());
  for (std::optional<ModInterpreter> *mod : {&scoreMod, &maskMod})
    if (*mod && this->inputs)
      (*mod)->setLoader(loader);
  if (mlir::FlatSymbolRefAttr v = op.getAdditiveAttr(); v && inputs)
    if (auto found = inputs->find(v.getValue()); found != inputs->end())
      additive = &found->second; // its shape checked by checkModInputs
}

llvm::Expected<Scalar> EvalContext::load(llvm::StringRef name,
                                         llvm::ArrayRef<int64_t> at) const {
  const HostTensor &t = inputs->find(name)->second;
  int64_t flat = 0;
  for (auto [n, i] : llvm::enumerate(at)) {
    if (i < 0 || i >= t.shape[n]) {
      std::string index;
      for (int64_t v : at)
        index += (index.empty() ? "" : ", ") + std::to_string(v);
      return error("reads " + name + "[" + index + "], outside its shape " + t.shapeString());
    }
    flat = flat * t.shape[n] + i;
  }
  double v = t.data[flat];
  if (t.type == ElementType::i32)
    return Scalar::ofInt(llvm::APInt(32, int64_t(v), /*isSigned=*/true));
  return Scalar::ofFloat(v);
}

ReferenceResult EvalContext::allocateOutputs(bool wantWeights) {
  ReferenceResult result;
  if (op.hasOutput(OutputKind::out))
    result.out = HostTensor(q.type, q.shape);
  if (op.hasOutput(OutputKind::lse))
    result.lse = HostTensor(ElementType::f32, {size.batch, heads, size.seqQ});
  if (wantWeights || op.hasOutput(OutputKind::weights))
    result.weights = HostTensor(ElementType::f32,
                                {size.batch, heads, size.seqQ, size.seqKv});
  return result;
}

llvm::Expected<bool> EvalContext::keeps(int64_t b, int64_t h, int64_t i,
                                        int64_t j) {
  if (!attnc::mask::isKept(rule, i, j, size.seqQ, size.seqKv))
    return false;
  if (!maskMod)
    return true;
  llvm::Expected<Scalar> keep =
      maskMod->run({Scalar::ofIndex(size.firstBatch + b), Scalar::ofIndex(h), Scalar::ofIndex(i),
                    Scalar::ofIndex(j)});
  if (!keep)
    return keep.takeError();
  return keep->i.isOne();
}

llvm::Expected<Scalar> EvalContext::runScoreMod(int64_t b, int64_t h, int64_t i, int64_t j,
                                                bool seedScore) {
  const double *qRow = &q.data[qIndex(b, h, i)];
  const double *kRow = &k.data[kvIndex(b, h / group, j)];
  double dot = 0;
  if (additive) { // sum_d v_d tanh(q_d + k_d)
    const double *v = &additive->data[additive->shape.size() == 2 ? h * dim : 0];
    for (int64_t d = 0; d < dim; ++d)
      dot += v[d] * std::tanh(qRow[d] + kRow[d]);
  } else {
    for (int64_t d = 0; d < dim; ++d)
      dot += qRow[d] * kRow[d];
  }
  Scalar score = Scalar::ofFloat(scale * dot);
  if (!scoreMod)
    return score;
  score.d = seedScore ? 1 : 0;
  return scoreMod->run({score, Scalar::ofIndex(size.firstBatch + b), Scalar::ofIndex(h),
                        Scalar::ofIndex(i), Scalar::ofIndex(j)});
}

llvm::Expected<std::pair<double, double>>
EvalContext::scoreAndSlope(int64_t b, int64_t h, int64_t i, int64_t j) {
  llvm::Expected<Scalar> s = runScoreMod(b, h, i, j, /*seedScore=*/true);
  if (!s)
    return s.takeError();
  return std::pair{s->f, scoreMod ? s->d : 1.0};
}

llvm::Error EvalContext::inputSlopes(int64_t b, int64_t h, int64_t i, int64_t j,
                                     InputSlopeFn fn) {
  // One run per load, seeded there (forward mode): a body reads few tables.
  for (mlir::Operation *load : floatLoads) {
    scoreMod->seedLoad(load);
    llvm::Expected<Scalar> modded = runScoreMod(b, h, i, j, /*seedScore=*/false);
    scoreMod->seedLoad(nullptr);
    if (!modded)
      return modded.takeError();
    llvm::StringRef name = llvm::cast<LoadOp>(load).getInput();
    const HostTensor &t = inputs->find(name)->second;
    int64_t flat = 0;
    for (auto [n, at] : llvm::enumerate(scoreMod->indicesOf(load)))
      flat = flat * t.shape[n] + at;
    fn(name, flat, modded->d);
  }
  return llvm::Error::success();
}

void EvalContext::storeRow(ReferenceResult &result, int64_t b, int64_t h,
                           int64_t i, double m, double l,
                           llvm::ArrayRef<double> acc) const {
  bool empty = l == 0;
  if (!result.out.empty()) {
    double *outRow = &result.out.data[qIndex(b, h, i)];
    for (int64_t d = 0; d < dim; ++d)
      outRow[d] = empty ? 0.0 : roundTo(result.out.type, acc[d] / l);
  }
  if (!result.lse.empty())
    result.lse.data[(b * heads + h) * size.seqQ + i] =
        empty ? -std::numeric_limits<double>::infinity()
              : roundTo(ElementType::f32, m + std::log(l));
}
