//===- Compiled.cpp - running a compiled kernel in attnc-run --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel is called exactly as a user would: through its exported C entry
// point with DLPack tensors, q, k, v and out in the spec's dtype (float16 and
// bfloat16 as their raw 16-bit patterns) and lse in float32. Timing is the
// median and best of `repeat` runs after one warm-up run.
//
//===----------------------------------------------------------------------===//

#include "Compiled.h"

#include "PeakProbe.h"
#include "attnc/Runtime/ElementCodec.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
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

/// The DLPack dtype of a kernel tensor of element type `type`.
DLDataType dlpackDtype(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return {kDLFloat, 32, 1};
  case ElementType::f16:
    return {kDLFloat, 16, 1};
  case ElementType::bf16:
    return {kDLBfloat, 16, 1};
  }
  llvm_unreachable("unknown element type");
}

/// A CPU tensor owning its data, stored as the kernel stores `type`
/// (ElementCodec.h): float32, or the 16-bit patterns of float16 / bfloat16.
struct DeviceTensor {
  ElementType type;
  std::vector<int64_t> shape;
  std::vector<char> data; // new'd, so aligned beyond any element size
  DLTensor dl{};

  DeviceTensor(ElementType type, llvm::ArrayRef<int64_t> dims)
      : type(type), shape(dims.begin(), dims.end()) {
    dl.dtype = dlpackDtype(type);
    data.assign(numElements() * elementBytes(dl.dtype), 0);
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = shape.size();
    dl.shape = shape.data();
  }
  /// `t`'s values rounded to `type` by the reference's own rounding (roundTo:
  /// to nearest, ties to even), after which storing them is exact.
  static DeviceTensor from(ElementType type, const HostTensor &t) {
    DeviceTensor d(type, t.shape);
    for (int64_t i = 0, e = d.numElements(); i < e; ++i)
      storeElement(d.dl.dtype, d.data.data(), i,
                   static_cast<float>(roundTo(type, t.data[i])));
    return d;
  }
  HostTensor toHost() const {
    HostTensor t(type, shape);
    for (int64_t i = 0, e = numElements(); i < e; ++i)
      t.data[i] = loadElement(dl.dtype, data.data(), i);
    return t;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  double megabytes() const { return data.size() / double(1 << 20); }
};

double peakRssMegabytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0; // kilobytes on Linux
}

} // namespace

Tolerance attnc::defaultTolerance(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return {2e-5, 2e-6};
  case ElementType::f16:
    return {4e-3, 1e-3};
  case ElementType::bf16:
    return {2e-2, 8e-3};
  }
  llvm_unreachable("unknown element type");
}

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
  // Every symbol is bound now, so that a kernel needing one that nothing
  // defines (a compiler-runtime helper, say) is this error rather than a
  // "symbol lookup error" that kills the process at its first call. The
  // library stays loaded, and getPermanentLibrary finds it so.
  if (!dlopen(o.soPath.c_str(), RTLD_NOW | RTLD_GLOBAL))
    return error("cannot load " + o.soPath + ": " + dlerror());
  std::string message;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(o.soPath.c_str(), &message);
  if (!library.isValid())
    return error("cannot load " + o.soPath + ": " + message);
  std::string name = op->getParentOfType<KernelOp>().getSymName().str();
  auto entry = reinterpret_cast<EntryFn>(library.getAddressOfSymbol(name.c_str()));
  if (!entry)
    return error(o.soPath + " has no kernel '" + name + "'");

  // q, k, v and out in the kernel's dtype, lse in float32 for every kernel
  // (the runtime checks both).
  ElementType type = *elementTypeOf(op.getDtype());
  DeviceTensor dq = DeviceTensor::from(type, q), dk = DeviceTensor::from(type, k),
               dv = DeviceTensor::from(type, v), dout(type, q.shape);
  bool bhsd = op.getLayout() == Layout::bhsd;
  DeviceTensor dlse(ElementType::f32,
                    {q.shape[0], op.getHeads(), q.shape[bhsd ? 2 : 1]});
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
    // bf16 work is measured against what the machine does in bf16: vdpbf16ps
    // where it has AVX512-BF16 (twice the FMA peak), the FMA peak elsewhere.
    bool bf16 = op.getDtype().isBF16() && hasBf16Dot();
    double peak = bf16 ? measureBf16DotPeakGflops(threads) : measureFmaPeakGflops(threads);
    llvm::outs() << llvm::formatv("; {0} peak {1:f1} GFLOPS on {2} threads: {3:f1}% "
                                  "of peak",
                                  bf16 ? "bf16 dot" : "FMA", peak, threads,
                                  100 * gflops / peak);
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
