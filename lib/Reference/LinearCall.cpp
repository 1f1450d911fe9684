//===- LinearCall.cpp - calling a compiled linear attention kernel --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/LinearCall.h"

using namespace attnc;
using mlir::attn::LinearAttentionOp;

LinearInputs attnc::seededLinearInputs(LinearAttentionOp op, int64_t batch, int64_t seq,
                                       int64_t seqKv, uint64_t seed) {
  ElementType type = *elementTypeOf(op.getDtype());
  int64_t keys = op.getCausal() ? seq : seqKv, dk = op.getDim();
  LinearInputs in;
  in.q = randomTensor(type, linearShape(op, batch, seq, true, false), seed);
  in.k = randomTensor(type, linearShape(op, batch, keys, false, false), seed + (1ULL << 40));
  in.v = randomTensor(type, linearShape(op, batch, keys, false, true), seed + (1ULL << 41));
  if (op.getCarryState()) {
    int64_t dv = op.getValueDimOrDefault();
    in.s0 = randomTensor(ElementType::f32, {batch, op.getKvHeads(), dk, dv}, seed + (1ULL << 42));
    in.z0 = randomTensor(ElementType::f32, {batch, op.getKvHeads(), dk}, seed + (3ULL << 41));
    for (double &z : in.z0.data)
      z = roundTo(ElementType::f32, 8 + 4 * z);
  }
  return in;
}

LinearTensors::LinearTensors(LinearAttentionOp op, const HostTensor &hq, const HostTensor &hk,
                             const HostTensor &hv, const HostTensor *s0, const HostTensor *z0) {
  ElementType type = hq.type;
  q = DeviceTensor::from(type, hq);
  k = DeviceTensor::from(type, hk);
  v = DeviceTensor::from(type, hv);
  llvm::SmallVector<int64_t, 4> outShape(hq.shape);
  outShape[3] = op.getValueDimOrDefault();
  out = std::make_unique<DeviceTensor>(type, outShape);
  if (!op.getCarryState())
    return;
  int64_t b = hq.shape[0], g = op.getKvHeads(), dk = op.getDim();
  finalState = std::make_unique<DeviceTensor>(ElementType::f32,
                                              llvm::ArrayRef<int64_t>{b, g, dk, outShape[3]});
  finalNorm = std::make_unique<DeviceTensor>(ElementType::f32, llvm::ArrayRef<int64_t>{b, g, dk});
  state = s0 ? DeviceTensor::from(ElementType::f32, *s0) : nullptr;
  norm = z0 ? DeviceTensor::from(ElementType::f32, *z0) : nullptr;
}

llvm::Error LinearTensors::call(const LoadedKernel &kernel, int threads) {
  std::vector<const DLTensor *> args = {&q->dl, &k->dl, &v->dl, &out->dl};
  if (finalState) {
    for (const auto &t : {&state, &norm})
      args.push_back(*t ? &(*t)->dl : nullptr); // NULL: from 0
    args.push_back(&finalState->dl);
    args.push_back(&finalNorm->dl);
  }
  attnc_options options{threads};
  if (int status = kernel.run(kernel.desc, args.data(), &options))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "kernel returned " + llvm::Twine(status) + ": " +
                                            (kernel.lastError ? kernel.lastError()
                                                              : "(no attnc_last_error)"));
  return llvm::Error::success();
}

LinearResult LinearTensors::toHost() const {
  LinearResult r;
  r.out = out->toHost();
  if (finalState) {
    r.finalState = finalState->toHost();
    r.finalNorm = finalNorm->toHost();
  }
  return r;
}
