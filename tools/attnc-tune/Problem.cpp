//===- Problem.cpp - what attnc-tune checks and times candidates on -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Problem.h"

#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/LinearCall.h"
#include "llvm/Support/FormatVariadic.h"

using namespace attnc;
using namespace attnc::tune;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// "" when `got` is within `tol` of `ref`, else `name` and how far off.
static std::string offBy(const char *name, const HostTensor &got, const HostTensor &ref,
                         Tolerance tol) {
  Comparison c = compareTensors(got, ref, tol);
  if (c.ok())
    return "";
  return llvm::formatv("{0}: {1} elements off the reference (max abs err {2:e2}, rtol {3:e1}, "
                       "atol {4:e1})",
                       name, c.bad, c.maxAbs, tol.rtol, tol.atol);
}

namespace {

/// An attention kernel's q, k, v, out (and lse), checked at the matrix's
/// tolerance of its dtype.
class AttentionTensors : public ProblemTensors {
public:
  AttentionTensors(AttentionOp op, const std::array<HostTensor, 3> &qkv,
                   ReferenceResult reference)
      : tensors(op, qkv[0], qkv[1], qkv[2]), reference(std::move(reference)),
        tolerance(defaultTolerance(qkv[0].type)) {}
  llvm::Error call(const LoadedKernel &kernel, int threads) override {
    return tensors.call(kernel, threads);
  }
  std::string offReference() const override {
    std::string off;
    if (!reference.out.empty())
      off = offBy("out", tensors.out->toHost(), reference.out, tolerance);
    if (off.empty() && tensors.wantLse)
      off = offBy("lse", tensors.lse->toHost(), reference.lse, tolerance);
    return off;
  }

private:
  KernelTensors tensors;
  ReferenceResult reference;
  Tolerance tolerance;
};

/// A linear attention kernel's tensors (the carried state from seeded
/// values where it takes one), each output checked against its largest
/// entry, as attnc-run checks them.
class LinearProblemTensors : public ProblemTensors {
public:
  LinearProblemTensors(LinearAttentionOp op, const LinearInputs &in,
                       std::optional<LinearResult> reference)
      : tensors(op, in.q, in.k, in.v, op.getCarryState() ? &in.s0 : nullptr,
                op.getCarryState() ? &in.z0 : nullptr),
        reference(std::move(reference)), rtol(relativeTolerance(in.q.type)) {}
  llvm::Error call(const LoadedKernel &kernel, int threads) override {
    return tensors.call(kernel, threads);
  }
  std::string offReference() const override {
    LinearResult got = tensors.toHost();
    std::pair<const char *, std::pair<const HostTensor *, const HostTensor *>> outputs[] = {
        {"out", {&got.out, &reference->out}},
        {"final_state", {&got.finalState, &reference->finalState}},
        {"final_norm", {&got.finalNorm, &reference->finalNorm}}};
    for (auto &[name, pair] : outputs) {
      if (pair.first->empty())
        continue;
      std::string off = offBy(name, *pair.first, *pair.second,
                              {rtol, rtol * largestMagnitude(*pair.second)});
      if (!off.empty())
        return off;
    }
    return "";
  }

private:
  LinearTensors tensors;
  std::optional<LinearResult> reference;
  double rtol;
};

llvm::Expected<std::unique_ptr<ProblemTensors>>
attentionTensors(AttentionOp op, ProblemSize size, uint64_t seed, bool withReference) {
  if (llvm::Error err = checkProblemSize(op, size))
    return std::move(err);
  if (llvm::Error err = checkFitsInMemory(op, size))
    return std::move(err);
  ElementType type = *elementTypeOf(op.getDtype());
  auto kv = tensorShape(op, size, false);
  std::array<HostTensor, 3> qkv{randomTensor(type, tensorShape(op, size, true), seed),
                                randomTensor(type, kv, seed + (1ULL << 40)),
                                randomTensor(type, kv, seed + (1ULL << 41))};
  ReferenceResult reference;
  if (withReference) {
    auto r = evaluateReference(op, qkv[0], qkv[1], qkv[2]);
    if (!r)
      return r.takeError();
    reference = std::move(*r);
  }
  return std::make_unique<AttentionTensors>(op, qkv, std::move(reference));
}

llvm::Expected<std::unique_ptr<ProblemTensors>>
linearTensors(LinearAttentionOp op, ProblemSize size, uint64_t seed, bool withReference) {
  if (op.getCausal() && size.seqQ != size.seqKv)
    return error("a causal linear attention has one length: give --seq-q alone");
  LinearInputs in = seededLinearInputs(op, size.batch, size.seqQ, size.seqKv, seed);
  std::optional<LinearResult> reference;
  if (withReference) {
    const HostTensor *s0 = op.getCarryState() ? &in.s0 : nullptr;
    const HostTensor *z0 = op.getCarryState() ? &in.z0 : nullptr;
    auto r = evaluateLinear(op, in.q, in.k, in.v, s0, z0);
    if (!r)
      return r.takeError();
    reference = std::move(*r);
  }
  return std::make_unique<LinearProblemTensors>(op, in, std::move(reference));
}

} // namespace

llvm::Expected<std::unique_ptr<Problem>> attnc::tune::makeProblem(KernelOp kernel,
                                                                  const ProblemSizes &s) {
  auto p = std::make_unique<Problem>();
  p->kernel = kernel.getSymName().str();
  auto linear = dyn_cast_or_null<LinearAttentionOp>(kernel.getCompute().getOperation());
  auto tensors = [&](ProblemSize size, bool withReference) {
    return linear ? linearTensors(linear, size, s.seed, withReference)
                  : attentionTensors(kernel.getAttention(), size, s.seed, withReference);
  };
  int64_t checkQ = std::min(s.seqQ, s.checkSeq);
  auto check = tensors({1, checkQ, std::max<int64_t>(1, s.seqKv - (s.seqQ - checkQ))}, true);
  if (!check)
    return check.takeError();
  auto timing = tensors({s.batch, s.seqQ, s.seqKv}, false);
  if (!timing)
    return timing.takeError();
  p->check = std::move(*check);
  p->timing = std::move(*timing);
  return p;
}
