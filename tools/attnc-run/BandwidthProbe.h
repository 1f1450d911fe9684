//===- BandwidthProbe.h - the machine's memory read bandwidth ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_RUN_BANDWIDTHPROBE_H
#define ATTNC_TOOLS_ATTNC_RUN_BANDWIDTHPROBE_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace attnc {

/// What one read-bandwidth probe measured.
struct ReadBandwidth {
  double gigabytesPerSecond = 0; // 1e9 bytes a second, best pass
  size_t bytes = 0;              // the buffer read each pass
  size_t lastLevelCache = 0;     // bytes; 0 when the system does not say
};

/// STREAM-style: `threads` threads at once each sum their share of one
/// buffer, more than 4x the last-level cache, with vector loads; the best of
/// a few passes. The bound a memory-bound kernel (decode) is measured
/// against, as the FMA peak is for compute-bound ones.
ReadBandwidth measureReadBandwidth(int threads);

/// Empties the caches of what a kernel read (attnc-run --cold-cache): reads
/// a buffer of twice the last-level cache (at least 256 MiB, at most a
/// quarter of RAM), so a decode kernel's next run takes its KV cache from
/// memory, as a serving step does, not from a last-level cache that holds it.
class CacheEvictor {
public:
  CacheEvictor();
  void evict();

private:
  size_t bytes;
  std::unique_ptr<uint64_t, void (*)(void *)> buffer;
  uint64_t sink = 0;
};

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_RUN_BANDWIDTHPROBE_H
