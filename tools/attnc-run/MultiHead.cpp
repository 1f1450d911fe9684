//===- MultiHead.cpp - attnc-run's multi-head attention kernels -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "MultiHead.h"

#include "SeededRun.h"
#include "attnc/Reference/KernelCall.h"
#include "attnc/Reference/KvCache.h"
#include "attnc/Reference/MultiHead.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace attnc;
using mlir::attn::MultiHeadAttentionOp;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Error attnc::runMultiHead(MultiHeadAttentionOp op, const MultiHeadRunOptions &o) {
  if (o.batch < 1 || o.seq < 0)
    return error("multi-head attention needs --batch >= 1 and --seq-q >= 0");
  ElementType type = *elementTypeOf(op.getDtype());
  int64_t e = op.getEmbedSize(), width = op.getAttention().getHeads() * op.getAttention().getDim();
  HostTensor x = randomTensor(type, {o.batch, o.seq, e}, o.seed);
  ProjectionWeights w;
  w.inWeight = linearWeight(type, inWeightShape(op), e, o.seed + (1ULL << 40));
  w.outWeight = linearWeight(type, outWeightShape(op), width, o.seed + (1ULL << 41));
  if (!o.noBias) {
    w.inBias = linearWeight(type, {qkvWidth(op)}, e, o.seed + (1ULL << 42));
    w.outBias = linearWeight(type, {e}, width, o.seed + (3ULL << 41));
  }
  if (!op.hasKeyLengths() && !o.keyLengths.empty())
    return error("--kv-lens is for a multi-head attention with key_padding = lengths");
  std::mt19937_64 random(o.seed + (5ULL << 40));
  llvm::Expected<std::vector<int32_t>> lengths =
      parseLengths(o.keyLengths, o.batch, o.seq, random);
  if (!lengths)
    return lengths.takeError();
  HostTensor keyLengths; // none without key padding
  if (op.hasKeyLengths()) {
    keyLengths = HostTensor(ElementType::i32, {o.batch});
    keyLengths.data.assign(lengths->begin(), lengths->end());
  } else {
    lengths->clear();
  }
  std::optional<MultiHeadResult> ref;
  if (!o.noReference) {
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<MultiHeadResult> r = evaluateMultiHead(op, x, w, *lengths);
    if (!r)
      return r.takeError();
    ref = std::move(*r);
    llvm::outs() << llvm::formatv(
        "multi-head attention (reference, double): {0:f3} s; out {1}, max |out| {2:e2}\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        ref->out.shapeString(), largestMagnitude(ref->out));
  }
  if (o.soPath.empty()) {
    if (!ref)
      return error("--no-reference goes with --so");
    return writeTensors(o.dir, {{"x", &x},
                                {"in_proj_weight", &w.inWeight},
                                {"in_proj_bias", &w.inBias},
                                {"out_proj_weight", &w.outWeight},
                                {"out_proj_bias", &w.outBias},
                                {"key_lengths", &keyLengths},
                                {"out", &ref->out}});
  }
  std::string name = op->getParentOfType<mlir::attn::KernelOp>().getSymName().str();
  llvm::Expected<LoadedKernel> kernel = loadTableKernel(o.soPath, name);
  if (!kernel)
    return kernel.takeError();
  std::unique_ptr<DeviceTensor> inputs[] = {
      DeviceTensor::from(type, x), DeviceTensor::from(type, w.inWeight),
      w.inBias.empty() ? nullptr : DeviceTensor::from(type, w.inBias),
      DeviceTensor::from(type, w.outWeight),
      w.outBias.empty() ? nullptr : DeviceTensor::from(type, w.outBias)};
  DeviceTensor out(type, x.shape);
  std::vector<const DLTensor *> args;
  for (const auto &t : inputs)
    args.push_back(t ? &t->dl : nullptr); // a NULL bias: none
  args.push_back(&out.dl);
  IndexTensor lengthsArg(*lengths, {o.batch});
  if (op.hasKeyLengths())
    args.push_back(&lengthsArg.dl);
  llvm::Expected<std::vector<double>> times = timeCalls(*kernel, args, o);
  if (!times)
    return times.takeError();
  auto a = op.getAttention();
  double tokens = double(o.batch) * o.seq;
  double projections = 2 * tokens * e * (qkvWidth(op) + width);
  double pairs = ref ? double(ref->keptPairs) : double(o.batch) * a.getHeads() * o.seq * o.seq;
  double flops = projections + 4.0 * a.getDim() * pairs;
  printSpeed(o, "multi-head attention", name, *times, flops,
             llvm::formatv("projections + 4 head_dim per kept pair; the projections {0:f1}%",
                           100 * projections / flops)
                 .str());
  HostTensor got = out.toHost();
  if (!o.dir.empty())
    if (llvm::Error err = writeTensors(o.dir, {{"out", &got}}))
      return err;
  if (!ref)
    return llvm::Error::success();
  double rtol = relativeTolerance(o, type);
  bool ok = compareOutputs("out", got, ref->out, rtol, rtol * largestMagnitude(ref->out));
  return ok ? llvm::Error::success()
            : error("the compiled multi-head attention kernel does not match the reference");
}
