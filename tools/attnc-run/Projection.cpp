//===- Projection.cpp - attnc-run's projection kernels --------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Projection.h"

#include "attnc/Reference/Projection.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace attnc;
using mlir::attn::ProjectionOp;

llvm::Error attnc::runProjection(ProjectionOp op, const ProjectionRunOptions &o) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (o.batch < 1 || o.seq < 0)
    return error("a projection needs --batch >= 1 and --seq-q >= 0");
  ElementType type = *elementTypeOf(op.getDtype());
  int64_t in = op.getIn(), out = op.getOut();
  HostTensor x = randomTensor(type, {o.batch, o.seq, in}, o.seed);
  HostTensor weight = linearWeight(type, projectionWeightShape(op), in, o.seed + (1ULL << 40));
  HostTensor bias = o.noBias ? HostTensor() : linearWeight(type, {out}, in, o.seed + (1ULL << 42));
  std::optional<HostTensor> ref;
  if (!o.noReference) {
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<HostTensor> y = evaluateProjection(op, x, weight, bias);
    if (!y)
      return y.takeError();
    ref = std::move(*y);
    llvm::outs() << llvm::formatv(
        "projection (reference, double): {0:f3} s; y {1}, max |y| {2:e2}\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        ref->shapeString(), largestMagnitude(*ref));
  }
  if (o.soPath.empty()) {
    if (!ref)
      return error("--no-reference goes with --so");
    return writeTensors(o.dir, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &*ref}});
  }
  std::string name = op->getParentOfType<mlir::attn::KernelOp>().getSymName().str();
  llvm::Expected<LoadedKernel> kernel = loadTableKernel(o.soPath, name);
  if (!kernel)
    return kernel.takeError();
  std::unique_ptr<DeviceTensor> xArg = DeviceTensor::from(type, x);
  std::unique_ptr<DeviceTensor> wArg = DeviceTensor::from(type, weight);
  std::unique_ptr<DeviceTensor> bArg = bias.empty() ? nullptr : DeviceTensor::from(type, bias);
  DeviceTensor y(type, {o.batch, o.seq, out});
  std::vector<const DLTensor *> args = {&xArg->dl, &wArg->dl, bArg ? &bArg->dl : nullptr, &y.dl};
  llvm::Expected<std::vector<double>> times = timeCalls(*kernel, args, o);
  if (!times)
    return times.takeError();
  printSpeed(o, "projection", name, *times, 2.0 * o.batch * o.seq * in * out,
             "2 x rows x in x out");
  HostTensor got = y.toHost();
  if (!o.dir.empty())
    if (llvm::Error err = writeTensors(o.dir, {{"y", &got}}))
      return err;
  if (!ref)
    return llvm::Error::success();
  double rtol = relativeTolerance(o, type);
  bool ok = compareOutputs("y", got, *ref, rtol, rtol * largestMagnitude(*ref));
  return ok ? llvm::Error::success()
            : error("the compiled projection kernel does not match the reference");
}
