//===- Compiled.cpp - running a compiled kernel in attnc-run --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel is called exactly as a user would: through its exported C entry
// point with DLPack tensors. Timing is the median and best of `repeat` runs
// after one warm-up run.
//
//===----------------------------------------------------------------------===//

#include "Compiled.h"

#include "PeakProbe.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace attnc;
using namespace mlir::attn;

namespace {

using EntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *,
                        DLTensor *, DLTensor *, const attnc_options *);

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A float32 CPU tensor owning its data.
struct DeviceTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor dl{};

  explicit DeviceTensor(llvm::ArrayRef<int64_t> dims) : shape(dims.begin(), dims.end()) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    data.assign(n, 0.0f);
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = shape.size();
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
  static DeviceTensor from(const HostTensor &t) {
    DeviceTensor d(t.shape);
    std::transform(t.data.begin(), t.data.end(), d.data.begin(),
                   [](double x) { return float(x); });
    return d;
  }
  HostTensor toHost() const {
    HostTensor t(ElementType::f32, shape);
    std::copy(data.begin(), data.end(), t.data.begin());
    return t;
  }
  double megabytes() const { return data.size() * 4.0 / (1 << 20); }
};

double peakRssMegabytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0; // kilobytes on Linux
}

} // namespace

bool attnc::compareOutputs(llvm::StringRef name, const HostTensor &got,
                           const HostTensor &ref, double rtol, double atol) {
  double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, worst = -1;
  for (int64_t i = 0, e = ref.numElements(); i < e; ++i) {
    double g = got.data[i], r = ref.data[i];
    if (std::isinf(r) || std::isinf(g)) {
      bad += !(std::isinf(r) && std::isinf(g) && (r < 0) == (g < 0));
      continue;
    }
    double err = std::fabs(g - r);
    if (!(err <= atol + rtol * std::fabs(r))) { // also catches NaN
      ++bad;
      if (worst < 0 || err > std::fabs(got.data[worst] - ref.data[worst]))
        worst = i;
    }
    maxAbs = std::max(maxAbs, err);
    if (r != 0)
      maxRel = std::max(maxRel, err / std::fabs(r));
  }
  llvm::outs() << llvm::formatv("{0}: max abs err {1:e2}, max rel err {2:e2} "
                                "(rtol {3:e1}, atol {4:e1}): {5}\n",
                                name, maxAbs, maxRel, rtol, atol,
                                bad ? "MISMATCH" : "ok");
  if (bad)
    llvm::outs() << llvm::formatv("  {0} elements off; worst at flat index {1}: got "
                                  "{2:e6}, want {3:e6}\n",
                                  bad, worst, worst >= 0 ? got.data[worst] : 0.0,
                                  worst >= 0 ? ref.data[worst] : 0.0);
  return bad == 0;
}

llvm::Expected<CompiledOutputs>
attnc::runCompiled(AttentionOp op, const HostTensor &q, const HostTensor &k,
                   const HostTensor &v, double usefulPairs,
                   const CompiledOptions &o) {
  std::string message;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(o.soPath.c_str(), &message);
  if (!library.isValid())
    return error("cannot load " + o.soPath + ": " + message);
  std::string name = op->getParentOfType<KernelOp>().getSymName().str();
  auto entry = reinterpret_cast<EntryFn>(library.getAddressOfSymbol(name.c_str()));
  if (!entry)
    return error(o.soPath + " has no kernel '" + name + "'");

  DeviceTensor dq = DeviceTensor::from(q), dk = DeviceTensor::from(k),
               dv = DeviceTensor::from(v), dout(q.shape);
  bool bhsd = op.getLayout() == Layout::bhsd;
  DeviceTensor dlse({q.shape[0], op.getHeads(), q.shape[bhsd ? 2 : 1]});
  bool wantLse = op.hasOutput(OutputKind::lse);
  attnc_options options{o.threads};
  int threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());

  // Present in kernels built with `attnc --count-tiles`.
  auto *tilesVisited = reinterpret_cast<int64_t *>(
      library.getAddressOfSymbol((name + "_tiles_visited").c_str()));
  // Everything the tool itself holds is resident by now; what the peak grows
  // by from here is the kernel's working memory (threads, stacks, buffers).
  double rssBefore = peakRssMegabytes();
  std::vector<double> times;
  for (int r = 0; r <= o.repeat; ++r) { // run 0 warms up
    if (tilesVisited)
      *tilesVisited = 0;
    auto start = std::chrono::steady_clock::now();
    int status = entry(&dq.dl, &dk.dl, &dv.dl, &dout.dl, wantLse ? &dlse.dl : nullptr, &options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != ATTNC_OK) {
      using LastErrorFn = const char *(*)();
      auto lastError = reinterpret_cast<LastErrorFn>(library.getAddressOfSymbol("attnc_last_error"));
      return error("kernel returned " + llvm::Twine(status) + ": " +
                   (lastError ? lastError() : "(no attnc_last_error)"));
    }
    if (r)
      times.push_back(seconds);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2], best = times.front();
  double gflops = 4.0 * op.getDim() * usefulPairs / median * 1e-9;
  llvm::outs() << llvm::formatv("compiled kernel @{0} ({1}), {2} threads: median "
                                "{3:f3} ms, best {4:f3} ms over {5} runs\n",
                                name, o.soPath, threads, median * 1e3, best * 1e3,
                                times.size());
  if (tilesVisited)
    llvm::outs() << "KV tiles visited in the last run (all batches and heads): "
                 << *tilesVisited << "\n";
  llvm::outs() << llvm::formatv("GFLOPS (4 * head_dim per kept (b, h, q, kv) pair, "
                                "median): {0:f1}",
                                gflops);
  if (o.measurePeak) {
    double peak = measureFmaPeakGflops(threads);
    llvm::outs() << llvm::formatv("; FMA peak {0:f1} GFLOPS on {1} threads: {2:f1}% "
                                  "of peak",
                                  peak, threads, 100 * gflops / peak);
  }
  llvm::outs() << "\n";
  double io = dq.megabytes() + dk.megabytes() + dv.megabytes() + dout.megabytes() +
              (wantLse ? dlse.megabytes() : 0);
  llvm::outs() << llvm::formatv("memory: kernel inputs and outputs {0:f1} MiB; "
                                "kernel working memory (growth of peak RSS during "
                                "the runs) {1:f1} MiB\n",
                                io, peakRssMegabytes() - rssBefore);
  CompiledOutputs result;
  if (op.hasOutput(OutputKind::out))
    result.out = dout.toHost();
  if (wantLse)
    result.lse = dlse.toHost();
  return result;
}
