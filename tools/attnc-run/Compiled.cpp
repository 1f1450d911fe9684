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

#include "BandwidthProbe.h"
#include "Callers.h"
#include "PeakProbe.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

using namespace attnc;
using namespace mlir::attn;

namespace {

double peakRssMegabytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0; // kilobytes on Linux
}

} // namespace

llvm::Expected<CompiledOutputs>
attnc::runCompiled(AttentionSpecOpInterface op, const HostTensor &q, const HostTensor &k,
                   const HostTensor &v, double usefulPairs,
                   const CompiledOptions &o) {
  std::string name = op->getParentOfType<KernelOp>().getSymName().str();
  // Global, so that the test instrumentation below is found.
  llvm::Expected<LoadedKernel> kernel = loadKernel(o.soPath, name, /*global=*/true);
  if (!kernel)
    return kernel.takeError();
  if (o.hostParallelFor)
    if (llvm::Error err = useHostParallelFor(*kernel))
      return std::move(err);
  KernelTensors tensors(op, q, k, v, o.kvCache, o.varlen, o.inputs);
  int threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());

  // Present in kernels built with `attnc --count-tiles`.
  auto *tilesVisited =
      reinterpret_cast<int64_t *>(dlsym(kernel->handle, (name + "_tiles_visited").c_str()));
  // Everything the tool itself holds is resident by now; what the peak grows
  // by from here is the kernel's working memory (threads, stacks, buffers).
  double rssBefore = peakRssMegabytes();
  std::vector<double> times;
  std::optional<CacheEvictor> evictor;
  if (o.coldCache)
    evictor.emplace();
  for (int r = 0; r <= o.repeat; ++r) { // run 0 warms up
    if (tilesVisited)
      *tilesVisited = 0;
    if (evictor)
      evictor->evict();
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = tensors.call(*kernel, o.threads))
      return std::move(err);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  // Which code the runtime ran: a multi-target object's chosen variant.
  if (auto lastTarget =
          reinterpret_cast<const char *(*)()>(dlsym(kernel->handle, "attnc_last_target")))
    llvm::outs() << "code ran: " << lastTarget() << "\n";
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
  llvm::outs() << llvm::formatv("memory: kernel inputs and outputs {0:f1} MiB; "
                                "kernel working memory (growth of peak RSS during "
                                "the runs) {1:f1} MiB\n",
                                tensors.megabytes(), peakRssMegabytes() - rssBefore);
  if (o.callers > 1)
    if (llvm::Error err =
            runConcurrentCallers(op, *kernel, q, k, v, o.threads, o.callers, o.repeat))
      return std::move(err);
  CompiledOutputs result;
  if (op.hasOutput(OutputKind::out))
    result.out = tensors.outToHost();
  if (tensors.wantLse)
    result.lse = tensors.lseToHost();
  if (tensors.weights)
    result.weights = tensors.weights->toHost();
  return result;
}
