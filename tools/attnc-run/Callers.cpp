//===- Callers.cpp - attnc-run's concurrent callers and host loop ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a serving host does with a kernel: call it from several threads at
// once, and lend it the host's own threads. Both check the runtime's promise
// that results do not depend on which or how many threads computed them.
//
//===----------------------------------------------------------------------===//

#include "Callers.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace attnc;
using namespace mlir::attn;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The host loop: call 0 on the calling thread, each other call on a thread
/// of its own (a host pool would reuse its threads; the runtime cannot tell).
int hostLoop(void *, int32_t count, void (*body)(void *, int32_t), void *closure) {
  std::vector<std::thread> threads;
  try {
    for (int32_t i = 1; i < count; ++i)
      threads.emplace_back(body, closure, i);
  } catch (const std::exception &) {
    // Out of threads: the runtime runs what no call took on the caller.
  }
  body(closure, 0);
  for (std::thread &t : threads)
    t.join();
  return 0;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

llvm::Error attnc::useHostParallelFor(const LoadedKernel &kernel) {
  using SetFn = void (*)(attnc_parallel_for_fn, void *);
  auto set = reinterpret_cast<SetFn>(dlsym(kernel.handle, "attnc_set_parallel_for"));
  if (!set)
    return error("--host-parallel-for: the kernel's runtime has no attnc_set_parallel_for "
                 "(built by an older attnc)");
  set(hostLoop, nullptr);
  return llvm::Error::success();
}

llvm::Error attnc::runConcurrentCallers(AttentionSpecOpInterface op, const LoadedKernel &kernel,
                                        const HostTensor &q, const HostTensor &k,
                                        const HostTensor &v, int threads, int callers,
                                        int rounds) {
  std::vector<std::unique_ptr<KernelTensors>> tensors;
  for (int c = 0; c < callers; ++c)
    tensors.push_back(std::make_unique<KernelTensors>(op, q, k, v));
  std::vector<double> serial, together;
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    for (auto &t : tensors)
      if (llvm::Error err = t->call(kernel, threads))
        return err;
    serial.push_back(secondsSince(start));
  }
  // The first serial call's bytes: every call must give them, serial or not.
  using Bytes = decltype(DeviceTensor::data);
  const Bytes out = tensors.front()->out->data, lse = tensors.front()->lse->data;
  const Bytes weights = tensors.front()->weights ? tensors.front()->weights->data : Bytes();
  auto differs = [&](const std::unique_ptr<KernelTensors> &t) {
    return t->out->data != out || (t->wantLse && t->lse->data != lse) ||
           (t->weights && t->weights->data != weights);
  };
  if (llvm::any_of(tensors, differs))
    return error("--callers: serial calls of the kernel gave different bits");
  for (auto &t : tensors) // nothing below can pass on what serial calls wrote
    for (DeviceTensor *d : {t->out.get(), t->lse.get()})
      std::fill(d->data.begin(), d->data.end(), char(0x7f));
  std::atomic<int> failures{0};
  for (int r = 0; r < rounds; ++r) {
    std::atomic<bool> go{false};
    std::vector<std::thread> running;
    for (int c = 1; c < callers; ++c)
      running.emplace_back([&, c] {
        while (!go.load())
          std::this_thread::yield();
        if (llvm::Error err = tensors[c]->call(kernel, threads)) {
          llvm::consumeError(std::move(err));
          ++failures;
        }
      });
    auto start = Clock::now();
    go = true;
    llvm::Error first = tensors[0]->call(kernel, threads);
    for (std::thread &t : running)
      t.join();
    together.push_back(secondsSince(start));
    if (first)
      return first;
  }
  if (failures)
    return error("--callers: " + llvm::Twine(failures.load()) + " concurrent calls failed");
  int differing = int(llvm::count_if(tensors, differs));
  double s = median(serial), t = median(together);
  unsigned each = threads > 0 ? unsigned(threads) : std::max(1u, std::thread::hardware_concurrency());
  llvm::outs() << llvm::formatv("{0} callers at once, {1} threads each: median {2:f3} ms a "
                                "round, one after another {3:f3} ms: {4:f2}x over {5} rounds\n",
                                callers, each, t * 1e3, s * 1e3, s / t, rounds);
  llvm::outs() << "concurrent outputs bit-identical to a serial call's: "
               << (differing ? "no (" + std::to_string(differing) + " callers differ)" : "yes")
               << "\n";
  if (differing)
    return error("--callers: concurrent calls gave other bits than a serial call");
  return llvm::Error::success();
}
