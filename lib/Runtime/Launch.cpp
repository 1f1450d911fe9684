//===- Launch.cpp - attnc_rt_launch and attnc_last_error ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A launch validates everything first (Validate.cpp), so a failed call leaves
// the tensors untouched; then it hands the tile function flat memref views of
// the tensors plus a params array of sizes and strides, once per work item
// (batch, head, query tile). Participants pull short runs of consecutive items
// from one atomic counter: tiles of a causal kernel differ in cost, and a
// shared counter balances that without the runtime having to know it.
//
// The library is linked statically into kernels, including shared objects,
// and its C++ internals are built with hidden visibility; only the C API of
// attnc_runtime.h is exported. Two kernel libraries in one process thus
// share the first-loaded copy of the C API (and its error message) but never
// mix each other's C++ internals.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include "CpuFeatures.h"
#include "Describe.h"
#include "HalideGrid.h"
#include "ThreadPool.h"
#include "Validate.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <limits>
#include <exception>
#include <string>

#define ATTNC_RT_EXPORT __attribute__((visibility("default")))

using namespace attnc::rt;

namespace {

/// The caller thread's last message. A fixed buffer rather than a
/// std::string: trivially destructible thread-local storage is safe in a
/// dlclose'd library, and setting it cannot throw or allocate.
thread_local char tlsError[1024] = "";

void setError(const char *message) {
  std::snprintf(tlsError, sizeof(tlsError), "%s", message);
}

/// The target of the code the caller thread's last launch ran.
thread_local const char *tlsTarget = "";

/// Explicit num_threads requests beyond this are clamped: a garbage value
/// must not make the (never shrinking) pool spawn threads without bound.
constexpr int64_t kMaxParticipants = 256;

/// Shared by every participant of one launch.
struct Job {
  const attnc_kernel_desc *desc = nullptr;
  attnc_memref views[NumTensors] = {};
  int64_t params[ATTNC_P_COUNT] = {};
  int64_t heads = 0, tiles = 0, items = 0;
  int64_t participants = 1;
  std::atomic<int64_t> next{0};    // the next unclaimed work item
  std::atomic<bool> failed{false}; // set once a tile returned non-zero
  std::atomic<int64_t> failedItem{-1};
  int32_t failedCode = 0; // written by whoever set failedItem
};

/// The view as the tile function takes it: one layout for every dtype, with
/// offset, size and stride in elements of the tensor's own dtype.
attnc_memref memrefOf(const TensorView &view) {
  return {view.base, view.base, /*offset=*/0, view.size, /*stride=*/1};
}

void fillParams(const CheckedLaunch &checked, int64_t *params) {
  params[ATTNC_P_SEQ_Q] = checked.seqQ;
  params[ATTNC_P_SEQ_KV] = checked.seqKV;
  const int base[NumTensors] = {ATTNC_P_Q_STRIDES, ATTNC_P_K_STRIDES,
                                ATTNC_P_V_STRIDES, ATTNC_P_OUT_STRIDES,
                                ATTNC_P_LSE_STRIDES};
  for (int id = 0; id < NumTensors; ++id)
    std::copy(checked.views[id].strides, checked.views[id].strides + 3,
              params + base[id]);
}

/// Longest run of consecutive items one claim takes.
constexpr int64_t kMaxClaim = 4;

/// Claims the next run of consecutive items, returned as [first, first + n).
/// Guided: an eighth of each participant's share of what is left, 1 to
/// kMaxClaim items, so a thread usually computes the query tile after the
/// one it finished (whose q rows that tile prefetched), and the last claims
/// are single items that keep the threads finishing together.
std::pair<int64_t, int64_t> claim(Job &job) {
  int64_t first = job.next.load(std::memory_order_relaxed), n = 0;
  do {
    if (first >= job.items)
      return {first, 0};
    n = std::clamp<int64_t>((job.items - first) / (8 * job.participants), 1, kMaxClaim);
  } while (!job.next.compare_exchange_weak(first, first + n, std::memory_order_relaxed));
  return {first, n};
}

/// Runs one work item; false if its tile function failed (recorded in job).
bool runItem(Job &job, int64_t item) {
  int64_t tile = item % job.tiles, bh = item / job.tiles;
  // The tile function takes non-const descriptors (MLIR's C interface);
  // fresh copies per item keep a misbehaving kernel from skewing others.
  attnc_memref m[NumTensors];
  std::copy(job.views, job.views + NumTensors, m);
  int64_t params[ATTNC_P_COUNT];
  std::copy(job.params, job.params + ATTNC_P_COUNT, params);
  attnc_memref_i64 p = {params, params, 0, ATTNC_P_COUNT, 1};
  int32_t rc = job.desc->tile(&m[Q], &m[K], &m[V], &m[Out], &m[Lse], &p,
                              bh / job.heads, bh % job.heads, tile);
  if (rc == 0)
    return true;
  int64_t none = -1;
  if (job.failedItem.compare_exchange_strong(none, item))
    job.failedCode = rc;
  job.failed.store(true, std::memory_order_relaxed);
  return false;
}

/// One participant: claims items until none are left or one failed. Items are
/// numbered ((b * heads) + h) * tiles + q_tile, so neighbouring claims share
/// a head's k and v in cache.
void runItems(void *ctx) {
  Job &job = *static_cast<Job *>(ctx);
  while (!job.failed.load(std::memory_order_relaxed)) {
    auto [first, n] = claim(job);
    if (n == 0)
      return;
    for (int64_t item = first; item < first + n; ++item)
      if (job.failed.load(std::memory_order_relaxed) || !runItem(job, item))
        return;
  }
}

/// Threads for a launch, the caller included: num_threads if positive (a
/// negative value, like 0, means all cores), never more than work items.
unsigned participantsFor(const attnc_options *opt, int64_t items) {
  int64_t want = opt && opt->num_threads > 0
                     ? std::min<int64_t>(opt->num_threads, kMaxParticipants)
                     : defaultParticipants();
  return static_cast<unsigned>(std::min(want, items));
}

/// What a tile function's non-zero return means (HalideTile.cpp for 2, 3 and < 0).
const char *failureCause(int32_t code) {
  if (code < 0)
    return "the kernel's Halide pipeline returned this Halide error code, e.g. a score_mod "
           "or mask_mod dividing by zero (its message went to stderr)";
  if (code == 2)
    return "a length beyond 2^31 - 1, which the Halide backend's 32-bit coordinates "
           "cannot address";
  if (code == 3)
    return "block_q beyond 256, the Halide backend's bound";
  return "a score_mod or mask_mod failed, e.g. an integer division by zero";
}

std::string kernelFailure(const Job &job) {
  int64_t item = job.failedItem.load();
  int64_t tile = item % job.tiles, bh = item / job.tiles;
  int64_t first = tile * job.desc->block_q;
  int64_t end = std::min(first + job.desc->block_q, job.params[ATTNC_P_SEQ_Q]);
  return cat("kernel '", kernelName(*job.desc), "' failed with code ",
             job.failedCode, " on work item (b=", bh / job.heads,
             ", h=", bh % job.heads, ", q_tile=", tile, ", query rows ", first,
             "..", end - 1,
             "): ", failureCause(job.failedCode), "; out and lse are partly written");
}

/// seq_kv = 0: every row is fully masked, so out = 0 and lse = -inf (the
/// reference's rule for such rows), written here without running the kernel.
/// Zero bits are 0 in every kernel dtype.
void writeMaskedRows(const attnc_kernel_desc &desc, const CheckedLaunch &c) {
  const int64_t elem = desc.dtype_bits / 8;
  const TensorView &o = c.views[Out], &l = c.views[Lse];
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < desc.num_heads; ++h)
      for (int64_t s = 0; s < c.seqQ; ++s) {
        std::memset(static_cast<char *>(o.base) +
                        (b * o.strides[0] + h * o.strides[1] + s * o.strides[2]) * elem,
                    0, size_t(desc.head_dim * elem));
        if (c.hasLse)
          static_cast<float *>(l.base)[b * l.strides[0] + h * l.strides[1] + s * l.strides[2]] =
              -std::numeric_limits<float>::infinity();
      }
}

/// A grid kernel: one call over the whole tensors, on the caller's thread.
int launchGrid(const attnc_kernel_desc *desc, Job &job, const CheckedLaunch &checked,
               const attnc_options *opt) {
  attnc_memref_i64 p = {job.params, job.params, 0, ATTNC_P_COUNT, 1};
  attnc_memref *m = job.views;
  int32_t rc = desc->grid(&m[Q], &m[K], &m[V], &m[Out], &m[Lse], &p, checked.batch,
                          checked.deviceId, opt ? opt->stream : nullptr);
  if (rc == 0) {
    setError("");
    return ATTNC_OK;
  }
  if (rc == kGridNoDevice) { // nothing ran
    setError(cat("kernel '", kernelName(*desc), "' cannot run: ", gridFailure(rc)).c_str());
    return ATTNC_ERR_DEVICE;
  }
  setError(cat("kernel '", kernelName(*desc), "' failed with code ", rc, ": ",
               gridFailure(rc), "; out and lse may be partly written")
               .c_str());
  return ATTNC_ERR_KERNEL;
}

int launch(const attnc_kernel_desc *desc, const DLTensor *q, const DLTensor *k,
           const DLTensor *v, DLTensor *out, DLTensor *lse,
           const attnc_options *opt) {
  CheckedLaunch checked;
  std::string message;
  if (attnc_status status =
          validateLaunch(desc, q, k, v, out, lse, checked, message)) {
    setError(message.c_str());
    return status;
  }
  tlsTarget = desc->target ? desc->target : "";
  // Empty launches, as PyTorch allows them: nothing to compute, or (seq_kv =
  // 0) rows with nothing to attend to.
  if (checked.items == 0) {
    setError("");
    return ATTNC_OK;
  }
  if (checked.seqKV == 0) {
    if (desc->device_type != kDLCPU) {
      setError(cat("kernel '", kernelName(*desc), "': k and v have seq_kv = 0, which a ",
                   deviceName(desc->device_type), " kernel does not take (on the CPU every "
                   "row gets out = 0 and lse = -inf)")
                   .c_str());
      return ATTNC_ERR_SHAPE;
    }
    writeMaskedRows(*desc, checked);
    setError("");
    return ATTNC_OK;
  }
  Job job;
  job.desc = desc;
  for (int id = 0; id < NumTensors; ++id)
    job.views[id] = memrefOf(checked.views[id]);
  fillParams(checked, job.params);
  if (desc->grid)
    return launchGrid(desc, job, checked, opt);
  job.heads = desc->num_heads;
  job.tiles = checked.tiles;
  job.items = checked.items;
  unsigned participants = participantsFor(opt, job.items);
  job.participants = participants;
  if (int rc = runOnThreads(participants, runItems, &job)) {
    setError(cat("kernel '", kernelName(*desc), "': the parallel-for given to "
                 "attnc_set_parallel_for returned ", rc, "; out and lse are partly written")
                 .c_str());
    return ATTNC_ERR_KERNEL;
  }
  if (job.failed.load()) {
    setError(kernelFailure(job).c_str());
    return ATTNC_ERR_KERNEL;
  }
  setError("");
  return ATTNC_OK;
}

} // namespace

void attnc::rt::setLastError(const std::string &message) { setError(message.c_str()); }

extern "C" ATTNC_RT_EXPORT const char *attnc_last_error(void) {
  return tlsError;
}

extern "C" ATTNC_RT_EXPORT const char *attnc_last_target(void) { return tlsTarget; }

extern "C" ATTNC_RT_EXPORT uint64_t attnc_cpu_features(void) { return cpuFeatures(); }

extern "C" ATTNC_RT_EXPORT int
attnc_rt_launch(const attnc_kernel_desc *desc, const DLTensor *q,
                const DLTensor *k, const DLTensor *v, DLTensor *out,
                DLTensor *lse, const attnc_options *opt) {
  // No C++ exception may cross into C callers. Only building a message can
  // throw (std::bad_alloc), so the handlers below must not allocate.
  try {
    return launch(desc, q, k, v, out, lse, opt);
  } catch (const std::exception &e) {
    std::snprintf(tlsError, sizeof(tlsError),
                  "attnc_rt_launch: internal error: %s", e.what());
  } catch (...) {
    setError("attnc_rt_launch: internal error");
  }
  return ATTNC_ERR_KERNEL;
}
