//===- SeededRun.cpp - attnc-run's runs of kernel families on seeded inputs ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "SeededRun.h"

#include "PeakProbe.h"

#include "attnc/Reference/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace attnc;

llvm::Error attnc::writeTensors(llvm::StringRef dir,
                         llvm::ArrayRef<std::pair<const char *, const HostTensor *>> tensors) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s", dir.str().c_str());
  for (auto [name, tensor] : tensors) {
    if (tensor->empty())
      continue;
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, llvm::Twine(name) + ".npy");
    if (llvm::Error err = writeNpy(path, *tensor))
      return err;
    llvm::outs() << llvm::formatv("wrote {0} {1} {2}\n", path, tensor->shapeString(),
                                  toString(tensor->type));
  }
  return llvm::Error::success();
}

double attnc::relativeTolerance(const SeededRunOptions &o, ElementType type) {
  return o.rtol >= 0 ? o.rtol : relativeTolerance(type);
}

void attnc::printSpeed(const SeededRunOptions &o, llvm::StringRef family, llvm::StringRef name,
                       const std::vector<double> &seconds, double flops, llvm::StringRef count) {
  double median = seconds[seconds.size() / 2];
  int threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  double gflops = flops / median * 1e-9;
  llvm::outs() << llvm::formatv("compiled {0} kernel @{1} ({2}), {3} threads: median {4:f3} ms, "
                                "best {5:f3} ms over {6} runs\n",
                                family, name, o.soPath, threads, median * 1e3,
                                seconds.front() * 1e3, seconds.size());
  llvm::outs() << llvm::formatv("GFLOPS ({0}, median): {1:f1}", count, gflops);
  if (o.measurePeak) {
    double peak = measureFmaPeakGflops(threads);
    llvm::outs() << llvm::formatv("; FMA peak {0:f1} GFLOPS on {1} threads: {2:f1}% of peak",
                                  peak, threads, 100 * gflops / peak);
  }
  llvm::outs() << "\n";
}

HostTensor attnc::linearWeight(ElementType type, llvm::ArrayRef<int64_t> shape, int64_t fanIn,
                               uint64_t seed) {
  HostTensor t = randomTensor(ElementType::f32, shape, seed);
  t.type = type;
  for (double &x : t.data)
    x = roundTo(type, x / std::sqrt(double(fanIn)));
  return t;
}

llvm::Expected<std::vector<double>> attnc::timeCalls(const LoadedKernel &kernel,
                                                     std::vector<const DLTensor *> &args,
                                                     const SeededRunOptions &o) {
  attnc_options options{o.threads};
  std::vector<double> times;
  for (int r = 0; r <= o.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (int status = kernel.run(kernel.desc, args.data(), &options))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "kernel returned " + llvm::Twine(status) + ": " +
              (kernel.lastError ? kernel.lastError() : "(no attnc_last_error)"));
    if (r)
      times.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times;
}
