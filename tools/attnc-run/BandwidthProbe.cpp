//===- BandwidthProbe.cpp - the machine's memory read bandwidth -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A decode step reads its KV cache once and does two FMAs per element read,
// so its bound is how fast the cores can read memory, not the FMA peak. The
// probe reads a buffer five times the last-level cache (so no pass is served
// from it), each thread its own contiguous share, summing 64-bit words with
// eight independent vector accumulators: the adds cost less than the loads,
// so the time is the reads'. Each thread first writes its share (the pages
// are then its NUMA node's and mapped), on huge pages where the system has
// them, and the best of a few passes is reported, as STREAM does.
//
//===----------------------------------------------------------------------===//

#include "BandwidthProbe.h"

#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace {

constexpr size_t kMinBytes = size_t(256) << 20;
constexpr size_t kAlign = size_t(2) << 20; // a huge page
constexpr int kPasses = 5;

// Eight accumulators of 256-bit loads: a core read 17.7-19.3 GB/s here (numpy's sum:
// 16.8-18.0), where four read 14.1-15.6, and eight 512-bit ones 15.8 as clang schedules
// them; two 32-byte loads a cycle are far more than memory gives a core anyway.
constexpr int kAccumulators = 8;

__attribute__((target("avx2"))) uint64_t sumAvx2(const uint64_t *p, size_t words) {
  __m256i acc[kAccumulators];
  for (__m256i &a : acc)
    a = _mm256_setzero_si256();
  for (size_t i = 0; i + 4 * kAccumulators <= words; i += 4 * kAccumulators)
    for (int k = 0; k < kAccumulators; ++k)
      acc[k] = _mm256_add_epi64(
          acc[k], _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 4 * k)));
  for (int k = 1; k < kAccumulators; ++k)
    acc[0] = _mm256_add_epi64(acc[0], acc[k]);
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), acc[0]);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

uint64_t sumScalar(const uint64_t *p, size_t words) {
  uint64_t acc[kAccumulators] = {};
  for (size_t i = 0; i + kAccumulators <= words; i += kAccumulators)
    for (int k = 0; k < kAccumulators; ++k)
      acc[k] += p[i + k];
  uint64_t sum = 0;
  for (uint64_t a : acc)
    sum += a;
  return sum;
}

size_t lastLevelCacheBytes() {
  for (int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long bytes = sysconf(level);
    if (bytes > 0)
      return size_t(bytes);
  }
  return 0;
}

/// Five times the last-level cache, at least 256 MiB, at most a quarter of
/// the memory; a whole number of huge pages per thread.
size_t bufferBytes(size_t llc, int threads, size_t timesLlc = 5) {
  size_t bytes = std::max(timesLlc * llc, kMinBytes);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    bytes = std::min(bytes, size_t(pages) * size_t(pageSize) / 4);
  size_t share = std::max(bytes / size_t(threads) / kAlign, size_t(1)) * kAlign;
  return share * size_t(threads);
}

/// Runs fn(t) on `threads` threads at once; the seconds until all are done.
template <typename Fn>
double timedOnThreads(int threads, Fn fn) {
  std::vector<std::thread> pool;
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(fn, t);
  for (std::thread &th : pool)
    th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

attnc::ReadBandwidth attnc::measureReadBandwidth(int threads) {
  ReadBandwidth result;
  threads = std::max(threads, 1);
  result.lastLevelCache = lastLevelCacheBytes();
  result.bytes = bufferBytes(result.lastLevelCache, threads);
  std::unique_ptr<uint64_t, decltype(&std::free)> buffer(
      static_cast<uint64_t *>(std::aligned_alloc(kAlign, result.bytes)), std::free);
  if (!buffer)
    return result;
  // Huge pages where the kernel gives them on request (transparent_hugepage =
  // madvise, Debian's default): a peak is what reads reach at their best, and
  // 4 KiB pages add a TLB miss a page.
  madvise(buffer.get(), result.bytes, MADV_HUGEPAGE);
  size_t words = result.bytes / sizeof(uint64_t) / size_t(threads);
  auto share = [&](int t) { return buffer.get() + size_t(t) * words; };
  timedOnThreads(threads, [&](int t) { std::fill_n(share(t), words, uint64_t(t + 1)); });
  uint64_t (*sum)(const uint64_t *, size_t) =
      __builtin_cpu_supports("avx2") ? sumAvx2 : sumScalar;
  std::vector<uint64_t> sink(threads);
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    double seconds = timedOnThreads(threads, [&](int t) { sink[t] += sum(share(t), words); });
    best = std::max(best, double(result.bytes) / seconds * 1e-9);
  }
  // Each share is t + 1 in every word: a sum that is not says the read was cut short.
  for (int t = 0; t < threads; ++t)
    if (sink[t] != uint64_t(kPasses) * words * uint64_t(t + 1))
      return result;
  result.gigabytesPerSecond = best;
  return result;
}

attnc::CacheEvictor::CacheEvictor()
    : bytes(bufferBytes(lastLevelCacheBytes(), 1, 2)),
      buffer(static_cast<uint64_t *>(std::aligned_alloc(kAlign, bytes)), std::free) {
  if (!buffer)
    return;
  madvise(buffer.get(), bytes, MADV_HUGEPAGE);
  std::fill_n(buffer.get(), bytes / sizeof(uint64_t), uint64_t(1));
}

void attnc::CacheEvictor::evict() {
  if (!buffer)
    return;
  size_t words = bytes / sizeof(uint64_t);
  uint64_t (*sum)(const uint64_t *, size_t) =
      __builtin_cpu_supports("avx2") ? sumAvx2 : sumScalar;
  sink += sum(buffer.get(), words);
}
