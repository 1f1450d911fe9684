//===- Backward.cpp - attnc-run's gradients -------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Backward.h"

#include "PeakProbe.h"
#include "SeededRun.h"
#include "attnc/Reference/Backward.h"
#include "attnc/Reference/KernelCall.h"
#include "attnc/Reference/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

using namespace attnc;
using mlir::attn::AttentionSpecOpInterface;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// d_out from `file`, or seeded from `seed` as q, k and v are.
llvm::Expected<HostTensor> gradientOfOut(const HostTensor &q, llvm::StringRef file,
                                         uint64_t seed) {
  if (file.empty())
    return randomTensor(q.type, q.shape, seed + 3 * (1ULL << 40));
  return readNpy(file, q.type);
}

/// lse's gradient [batch, heads, seq_q] (f32): none, from `file`, or seeded.
llvm::Expected<std::optional<HostTensor>> gradientOfLse(AttentionSpecOpInterface op,
                                                        const HostTensor &q,
                                                        llvm::StringRef file, uint64_t seed) {
  if (file.empty())
    return std::nullopt;
  int seqDim = op.getLayout() == mlir::attn::Layout::bhsd ? 2 : 1;
  llvm::SmallVector<int64_t, 3> shape = {q.shape[0], op.getHeads(), q.shape[seqDim]};
  if (file == "seeded")
    return randomTensor(ElementType::f32, shape, seed + 5 * (1ULL << 40));
  llvm::Expected<HostTensor> t = readNpy(file, ElementType::f32);
  if (!t)
    return t.takeError();
  return std::move(*t);
}

/// `tensors` written to `dir` as <name>.npy in f32.
llvm::Error writeGradients(llvm::StringRef dir,
                           llvm::ArrayRef<std::pair<const char *, const HostTensor *>> tensors) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s", dir.str().c_str());
  for (auto [name, tensor] : tensors) {
    HostTensor file = *tensor;
    file.type = ElementType::f32;
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, llvm::Twine(name) + ".npy");
    if (llvm::Error err = writeNpy(path, file))
      return err;
    llvm::outs() << llvm::formatv("wrote {0} {1} f32 (max |x| {2:e2})\n", path,
                                  file.shapeString(), largestMagnitude(file));
  }
  return llvm::Error::success();
}

/// The reference's gradients with the forward's out and lse, or for
/// timing only a random out and lse = log(seq_kv).
llvm::Expected<BackwardResult> forwardFor(AttentionSpecOpInterface op, const HostTensor &q,
                                          const HostTensor &k, const HostTensor &v,
                                          const HostTensor &dOut, const HostTensor *dLse,
                                          const ModInputs &mods,
                                          const CompiledBackwardOptions &o) {
  if (!o.noReference)
    return evaluateBackward(op, q, k, v, dOut, &mods, dLse);
  BackwardResult r;
  r.out = randomTensor(q.type, q.shape, o.seed + 4 * (1ULL << 40));
  int seqDim = op.getLayout() == mlir::attn::Layout::bhsd ? 2 : 1;
  r.lse = HostTensor(ElementType::f32, {q.shape[0], op.getHeads(), q.shape[seqDim]});
  std::fill(r.lse.data.begin(), r.lse.data.end(),
            std::log(double(std::max<int64_t>(k.shape[seqDim], 1))));
  return std::move(r);
}

} // namespace

llvm::Error attnc::runBackward(AttentionSpecOpInterface op, const HostTensor &q,
                               const HostTensor &k, const HostTensor &v, const ModInputs &mods,
                               const LossGradients &loss, uint64_t seed, llvm::StringRef dir) {
  llvm::Expected<HostTensor> dOut = gradientOfOut(q, loss.dOut, seed);
  if (!dOut)
    return dOut.takeError();
  llvm::Expected<std::optional<HostTensor>> dLse = gradientOfLse(op, q, loss.dLse, seed);
  if (!dLse)
    return dLse.takeError();
  const HostTensor *dLsePtr = *dLse ? &**dLse : nullptr;
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<BackwardResult> grads = evaluateBackward(op, q, k, v, *dOut, &mods, dLsePtr);
  if (!grads)
    return grads.takeError();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  llvm::outs() << llvm::formatv("backward (reference, double): {0:f3} s\n", seconds);
  std::vector<std::string> names;
  std::vector<std::pair<const char *, const HostTensor *>> files = {
      {"d_out", &*dOut}, {"dq", &grads->dq}, {"dk", &grads->dk}, {"dv", &grads->dv}};
  if (dLsePtr)
    files.push_back({"d_lse", dLsePtr});
  for (const auto &d : grads->dInputs)
    names.push_back("d_" + d.first().str());
  for (auto [name, d] : llvm::zip(names, grads->dInputs))
    files.push_back({name.c_str(), &d.second});
  return writeGradients(dir, files);
}

llvm::Error attnc::runCompiledBackward(AttentionSpecOpInterface op, const HostTensor &q,
                                       const HostTensor &k, const HostTensor &v,
                                       const ModInputs &mods,
                                       const CompiledBackwardOptions &o) {
  llvm::Expected<HostTensor> dOut = gradientOfOut(q, o.loss.dOut, o.seed);
  if (!dOut)
    return dOut.takeError();
  llvm::Expected<std::optional<HostTensor>> dLse = gradientOfLse(op, q, o.loss.dLse, o.seed);
  if (!dLse)
    return dLse.takeError();
  const HostTensor *dLsePtr = *dLse ? &**dLse : nullptr;
  llvm::Expected<BackwardResult> ref = forwardFor(op, q, k, v, *dOut, dLsePtr, mods, o);
  if (!ref)
    return ref.takeError();
  std::string name = op->getParentOfType<mlir::attn::KernelOp>().getSymName().str();
  llvm::Expected<LoadedKernel> kernel = loadTableKernel(o.soPath, name);
  if (!kernel)
    return kernel.takeError();
  // The kernel reads the forward's out as the spec's dtype stores it.
  std::unique_ptr<DeviceTensor> forward[] = {
      DeviceTensor::from(q.type, q),          DeviceTensor::from(q.type, k),
      DeviceTensor::from(q.type, v),          DeviceTensor::from(q.type, ref->out),
      DeviceTensor::from(ElementType::f32, ref->lse), DeviceTensor::from(q.type, *dOut)};
  DeviceTensor dq(q.type, q.shape), dk(q.type, k.shape), dv(q.type, v.shape);
  std::vector<const DLTensor *> args;
  for (const auto &t : forward)
    args.push_back(&t->dl);
  // d_lse: NULL for none.
  std::unique_ptr<DeviceTensor> lseGradient =
      dLsePtr ? DeviceTensor::from(ElementType::f32, *dLsePtr) : nullptr;
  args.push_back(lseGradient ? &lseGradient->dl : nullptr);
  for (DeviceTensor *t : {&dq, &dk, &dv})
    args.push_back(&t->dl);
  // The mods' inputs follow every other argument, in the spec's order.
  std::vector<std::unique_ptr<DeviceTensor>> inputs;
  if (mlir::ArrayAttr decls = op.getInputsAttr())
    for (auto decl : decls.getAsRange<mlir::attn::ModInputAttr>()) {
      const HostTensor &t = mods.find(decl.getName().getValue())->second;
      inputs.push_back(DeviceTensor::from(t.type, t));
      args.push_back(&inputs.back()->dl);
    }
  // Then the gradients of the f32 ones, in the same order.
  std::vector<std::string> tables;
  std::vector<std::unique_ptr<DeviceTensor>> tableGrads;
  if (mlir::ArrayAttr decls = op.getInputsAttr())
    for (auto decl : decls.getAsRange<mlir::attn::ModInputAttr>())
      if (decl.getElementType().isF32()) {
        tables.push_back(decl.getName().getValue().str());
        const HostTensor &t = mods.find(tables.back())->second;
        tableGrads.push_back(std::make_unique<DeviceTensor>(ElementType::f32, t.shape));
        args.push_back(&tableGrads.back()->dl);
      }
  attnc_options options{o.threads};
  std::vector<double> times;
  for (int r = 0; r <= o.repeat; ++r) { // run 0 warms up
    auto start = std::chrono::steady_clock::now();
    if (int status = kernel->run(kernel->desc, args.data(), &options))
      return error("kernel returned " + llvm::Twine(status) + ": " +
                   (kernel->lastError ? kernel->lastError() : "(no attnc_last_error)"));
    if (r)
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  int threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  double pairs = o.noReference ? o.keptPairs : double(ref->keptPairs);
  double gflops = 2.5 * 4.0 * op.getDim() * pairs / median * 1e-9;
  llvm::outs() << llvm::formatv("compiled backward kernel @{0} ({1}), {2} threads: median "
                                "{3:f3} ms, best {4:f3} ms over {5} runs\n",
                                name, o.soPath, threads, median * 1e3, times.front() * 1e3,
                                times.size());
  llvm::outs() << llvm::formatv("GFLOPS (2.5 x the forward's 4 * head_dim per kept pair, "
                                "median): {0:f1}",
                                gflops);
  if (o.measurePeak) {
    double peak = measureFmaPeakGflops(threads);
    llvm::outs() << llvm::formatv("; FMA peak {0:f1} GFLOPS on {1} threads: {2:f1}% of peak",
                                  peak, threads, 100 * gflops / peak);
  }
  llvm::outs() << "\n";
  if (o.noReference)
    return o.dir.empty() ? llvm::Error::success() : writeGradients(o.dir, {{"d_out", &*dOut}});
  double rtol = o.rtol >= 0 ? o.rtol
                : q.type == ElementType::f32 ? 1e-4
                : q.type == ElementType::f16 ? 4e-3
                                             : 2e-2;
  bool ok = true;
  HostTensor got[] = {dq.toHost(), dk.toHost(), dv.toHost()};
  const HostTensor *want[] = {&ref->dq, &ref->dk, &ref->dv};
  const char *names[] = {"dq", "dk", "dv"};
  // Relative to the tensor's largest gradient, or to d_out's largest where
  // that is smaller (one kept key: dq and dk are 0 up to rounding).
  double floor = largestMagnitude(*dOut);
  for (int i = 0; i < 3; ++i)
    ok &= compareOutputs(names[i], got[i], *want[i], rtol,
                         rtol * std::max(largestMagnitude(*want[i]), floor));
  std::vector<std::string> tableNames;
  std::vector<HostTensor> tableGot;
  for (auto [table, grad] : llvm::zip(tables, tableGrads)) {
    tableNames.push_back("d_" + table);
    tableGot.push_back(grad->toHost());
    const HostTensor &want = ref->dInputs.find(table)->second;
    ok &= compareOutputs(tableNames.back().c_str(), tableGot.back(), want, rtol,
                         rtol * std::max(largestMagnitude(want), floor));
  }
  std::vector<std::pair<const char *, const HostTensor *>> files = {
      {"d_out", &*dOut}, {"dq", &got[0]}, {"dk", &got[1]}, {"dv", &got[2]}};
  if (dLsePtr)
    files.push_back({"d_lse", dLsePtr});
  for (auto [name, t] : llvm::zip(tableNames, tableGot))
    files.push_back({name.c_str(), &t});
  if (!o.dir.empty())
    if (llvm::Error err = writeGradients(o.dir, files))
      return err;
  return ok ? llvm::Error::success()
            : error("the compiled backward kernel does not match the reference");
}
