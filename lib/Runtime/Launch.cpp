//===- Launch.cpp - attnc_rt_launch and attnc_last_error ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A launch validates everything first (Validate.cpp), so a failed call leaves
// the tensors untouched; then it runs the kernel's phases in order, handing
// each item function flat memref views of the tensors plus a params array of
// sizes and strides, once per work item (for attention: batch, head, query
// tile). Participants pull short runs of consecutive items from one atomic
// counter: tiles of a causal kernel differ in cost, and a shared counter
// balances that without the runtime having to know it.
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
#include "CudaDriver.h"
#include "Describe.h"
#include "HalideGrid.h"
#include "ThreadPool.h"
#include "Validate.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
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

/// Shared by every participant of one phase of a launch.
struct Job {
  const attnc_kernel_desc *desc = nullptr;
  const attnc_phase_desc *phase = nullptr;
  const CheckedLaunch *checked = nullptr;
  attnc_memref views[kMaxArgs] = {};
  const PhaseItems *shape = nullptr;
  int64_t items = 0;
  int64_t participants = 1;
  std::atomic<int64_t> next{0};    // the next unclaimed work item
  std::atomic<bool> failed{false}; // set once an item returned non-zero
  // The lowest failed item and its code (under failureLock). Every claimed
  // item runs, and claims go in order, so every item below it ran: the
  // failure reported is the same for any number of threads.
  std::mutex failureLock;
  int64_t failedItem = -1;
  int32_t failedCode = 0;
};

/// The view as item functions take it: one layout for every dtype, with
/// offset, size and stride in elements of the tensor's own dtype.
attnc_memref memrefOf(const TensorView &view) {
  return {view.base, view.base, /*offset=*/0, view.size, /*stride=*/1};
}

/// Item `item`'s coordinates, the last one varying fastest.
void coordinates(const PhaseItems &shape, int64_t item, int64_t *index) {
  for (int c = shape.rank - 1; c >= 0; --c) {
    index[c] = item % shape.extents[c];
    item /= shape.extents[c];
  }
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

/// Runs one work item; a failure is recorded in job.
void runItem(Job &job, int64_t item) {
  // Item functions take non-const descriptors (MLIR's C interface); fresh
  // copies per item keep a misbehaving kernel from skewing others.
  attnc_memref m[kMaxArgs];
  std::copy(job.views, job.views + job.checked->tables.numViews, m);
  int64_t params[kMaxParams];
  std::copy(job.checked->params, job.checked->params + job.desc->num_params, params);
  attnc_memref_i64 p = {params, params, 0, job.desc->num_params, 1};
  int64_t index[kMaxRank];
  coordinates(*job.shape, item, index);
  int32_t rc = job.phase->item(m, &p, index);
  if (rc == 0)
    return;
  {
    std::lock_guard<std::mutex> lock(job.failureLock);
    if (job.failedItem < 0 || item < job.failedItem) {
      job.failedItem = item;
      job.failedCode = rc;
    }
  }
  job.failed.store(true, std::memory_order_relaxed);
}

/// One participant: claims items until none are left or one failed (its
/// claimed items all run: see Job::failedItem). Items are
/// numbered row-major over the phase's index space (for attention
/// ((b * heads) + h) * tiles + q_tile), so neighbouring claims share a
/// head's k and v in cache.
void runItems(void *ctx) {
  Job &job = *static_cast<Job *>(ctx);
  while (!job.failed.load(std::memory_order_relaxed)) {
    auto [first, n] = claim(job);
    if (n == 0)
      return;
    for (int64_t item = first; item < first + n; ++item)
      runItem(job, item);
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

/// What an item function's non-zero return means (HalideTile.cpp for 2, 3 and < 0).
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

/// "(b=0, h=1, q_tile=2: seq_q 64..95)": the item's coordinates, and for a
/// coordinate that divides a symbol (seq_q / block_q) the range it covers.
std::string itemText(const Job &job, int64_t item) {
  const attnc_kernel_desc &d = *job.desc;
  int p = int(job.phase - d.phases);
  int64_t index[kMaxRank];
  coordinates(*job.shape, item, index);
  std::string text = "(", ranges;
  for (int c = 0; c < job.shape->rank; ++c) {
    text += cat(c ? ", " : "", indexName(*job.phase, c), "=", index[c]);
    const Term &t = job.checked->tables.phaseItems[p][c];
    if (t.divisor < 0)
      continue;
    int64_t by = job.checked->symbols[t.divisor], total = job.checked->symbols[t.symbol];
    ranges += cat(ranges.empty() ? ": " : ", ", d.symbols[t.symbol].name, " ", index[c] * by,
                  "..", std::min(total, (index[c] + 1) * by) - 1);
  }
  return text + ranges + ")";
}

/// The tensor argument a code of kIndexFailure + arg names, or NULL.
const attnc_tensor_desc *indexFailureTensor(const attnc_kernel_desc &d, int32_t code) {
  for (int i = 0; code >= ATTNC_ITEM_INDEX_FAILURE && i < d.num_tensors; ++i)
    if (d.tensors[i].arg == code - ATTNC_ITEM_INDEX_FAILURE && !isScratch(d.tensors[i]))
      return &d.tensors[i];
  return nullptr;
}

/// What a mod's load outside `input` did.
std::string indexFailureCause(const attnc_tensor_desc &input) {
  return cat("a score_mod or mask_mod read ", input.name, " at an index outside its shape [",
             input.legend, "]; nothing outside it was read");
}

std::string kernelFailure(const Job &job) {
  const attnc_tensor_desc *input = indexFailureTensor(*job.desc, job.failedCode);
  std::string cause = input ? indexFailureCause(*input) : failureCause(job.failedCode);
  return cat("kernel '", kernelName(*job.desc), "' failed with code ", job.failedCode,
             " on work item ", itemText(job, job.failedItem), " of phase '",
             job.phase->name, "': ", cause, "; its outputs are partly written");
}

/// Writes `bits` (of `bytes` bytes) to every element of `view`.
void fillView(const TensorView &view, uint32_t bits, int bytes) {
  if (view.size == 0)
    return;
  int64_t index[kMaxRank] = {};
  for (;;) {
    int64_t at = 0;
    for (int d = 0; d < view.rank; ++d)
      at += index[d] * view.strides[d];
    std::memcpy(static_cast<char *>(view.base) + at * bytes, &bits, size_t(bytes));
    int d = view.rank - 1;
    while (d >= 0 && ++index[d] == view.shape[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

/// A reduced size of 0 (seq_kv = 0: rows with nothing to attend to): every
/// output gets its fill value (out = 0, lse = -inf, the reference's rule)
/// without running the kernel.
void writeFills(const attnc_kernel_desc &desc, const CheckedLaunch &c) {
  for (int i = 0; i < desc.num_tensors; ++i) {
    const attnc_tensor_desc &t = desc.tensors[i];
    if (!(t.flags & ATTNC_TENSOR_OUTPUT))
      continue;
    // -inf in float32, float16 and bfloat16; zero bits are 0 in each.
    uint32_t negInf = t.dtype_bits == 32 ? 0xFF800000u : t.dtype_code == kDLBfloat ? 0xFF80u
                                                                                   : 0xFC00u;
    fillView(c.views[t.arg], t.fill == ATTNC_FILL_NEG_INF ? negInf : 0u, t.dtype_bits / 8);
  }
}

/// A device phase: one call over every item, on the caller's thread.
int runDevicePhase(Job &job, const attnc_options *opt) {
  const attnc_kernel_desc *desc = job.desc;
  int64_t params[kMaxParams];
  std::copy(job.checked->params, job.checked->params + desc->num_params, params);
  attnc_memref_i64 p = {params, params, 0, desc->num_params, 1};
  int32_t rc = job.phase->device(job.views, &p, job.shape->extents, job.checked->deviceId,
                                 opt ? opt->stream : nullptr);
  if (rc == 0)
    return ATTNC_OK;
  if (rc == kGridNoDevice) { // nothing ran
    setError(cat("kernel '", kernelName(*desc), "' cannot run: ", gridFailure(rc)).c_str());
    return ATTNC_ERR_DEVICE;
  }
  const attnc_tensor_desc *input = indexFailureTensor(*desc, rc);
  std::string cause = input ? indexFailureCause(*input) : gridFailure(rc);
  setError(cat("kernel '", kernelName(*desc), "' failed with code ", rc, " in phase '",
               job.phase->name, "': ", cause, "; its outputs may be partly written")
               .c_str());
  return input ? ATTNC_ERR_INDEX : ATTNC_ERR_KERNEL;
}

/// An item phase: its items on the caller's thread and helpers (`nextSoon`: a
/// phase of this launch follows).
int runItemPhase(Job &job, const attnc_options *opt, bool nextSoon) {
  job.participants = participantsFor(opt, job.items);
  if (int rc = runOnThreads(unsigned(job.participants), runItems, &job, nextSoon)) {
    setError(cat("kernel '", kernelName(*job.desc), "': the parallel-for given to "
                 "attnc_set_parallel_for returned ", rc, "; its outputs are partly written")
                 .c_str());
    return ATTNC_ERR_KERNEL;
  }
  if (job.failed.load()) {
    setError(kernelFailure(job).c_str());
    return indexFailureTensor(*job.desc, job.failedCode) ? ATTNC_ERR_INDEX : ATTNC_ERR_KERNEL;
  }
  return ATTNC_OK;
}

/// The calling thread's scratch block, kept from one launch to the next: a
/// block freed after each call (a backward's dq partials are tens of MiB)
/// comes back from the OS as fresh pages, faulted in and cleared on every
/// call (Zen 4, a window backward at 8192 tokens: about a tenth of its
/// time). Kernels never read scratch they did not write.
struct ScratchCache {
  std::unique_ptr<void, void (*)(void *)> block{nullptr, std::free};
  size_t bytes = 0;
};
thread_local ScratchCache tlsScratch;

/// A device kernel's scratch block: device memory allocated on the launch's
/// stream, returned on it once the launch's phases are queued.
struct DeviceScratch {
  int64_t device = 0;
  void *stream = nullptr;
  uint64_t address = 0;
  DeviceScratch() = default;
  DeviceScratch(const DeviceScratch &) = delete;
  ~DeviceScratch() {
    if (address)
      cudaFreeAsync(device, address, stream);
  }
};

/// The scratch block of a CPU kernel, from the thread's cache; null if the
/// allocation failed.
void *hostScratch(size_t bytes) {
  ScratchCache &cache = tlsScratch;
  if (cache.bytes < bytes) {
    cache.block.reset();
    cache.bytes = 0;
    size_t rounded = (bytes + 63) / 64 * 64;
    cache.block.reset(std::aligned_alloc(64, rounded));
    if (cache.block)
      cache.bytes = rounded;
  }
  return cache.block.get();
}

/// The scratch tensors' block (validateLaunch laid them out: their views'
/// bases are offsets into it until here): host memory for a CPU kernel,
/// memory of the tensors' device for a CUDA one.
int allocateScratch(const attnc_kernel_desc &desc, CheckedLaunch &checked,
                    const attnc_options *opt, DeviceScratch &onDevice) {
  if (checked.scratchBytes == 0)
    return ATTNC_OK;
  void *block = nullptr;
  std::string error;
  if (desc.device_type == kDLCPU) {
    block = hostScratch(size_t(checked.scratchBytes));
  } else if (desc.device_type == kDLCUDA) {
    onDevice.device = checked.deviceId;
    onDevice.stream = opt ? opt->stream : nullptr;
    if (cudaAllocAsync(onDevice.device, size_t(checked.scratchBytes), onDevice.stream,
                       onDevice.address, error))
      block = reinterpret_cast<void *>(uintptr_t(onDevice.address));
  } else {
    error = cat("working memory on ", deviceName(desc.device_type), " is not built");
  }
  if (!block) {
    setError(cat("kernel '", kernelName(desc), "': could not allocate ", checked.scratchBytes,
                 " bytes of working memory", error.empty() ? "" : ": ", error)
                 .c_str());
    return desc.device_type == kDLCPU ? ATTNC_ERR_LIMIT : ATTNC_ERR_DEVICE;
  }
  for (int i = 0; i < desc.num_tensors; ++i)
    if (isScratch(desc.tensors[i])) {
      TensorView &v = checked.views[desc.tensors[i].arg];
      v.base = static_cast<char *>(block) + reinterpret_cast<uintptr_t>(v.base);
    }
  return ATTNC_OK;
}

int launch(const attnc_kernel_desc *desc, const DLTensor *const *args,
           const attnc_options *opt) {
  CheckedLaunch checked;
  std::string message;
  if (attnc_status status =
          validateLaunch(desc, args, checked, message, opt ? opt->stream : nullptr)) {
    setError(message.c_str());
    return status;
  }
  tlsTarget = desc->target ? desc->target : "";
  // Empty launches, as PyTorch allows them: nothing to compute, or a
  // reduced size of 0 (seq_kv = 0: rows with nothing to attend to).
  if (checked.totalItems == 0) {
    setError("");
    return ATTNC_OK;
  }
  if (checked.reducedZero >= 0) {
    const char *sym = desc->symbols[checked.reducedZero].name;
    if (desc->device_type != kDLCPU) {
      setError(cat("kernel '", kernelName(*desc), "': ",
                   desc->tensors[checked.tables.boundBy[checked.reducedZero]].name, " has ",
                   sym, " = 0, which a ", deviceName(desc->device_type),
                   " kernel does not take (on the CPU every output gets its fill value: "
                   "for attention out = 0 and lse = -inf)")
                   .c_str());
      return ATTNC_ERR_SHAPE;
    }
    writeFills(*desc, checked);
    setError("");
    return ATTNC_OK;
  }
  DeviceScratch deviceScratch;
  if (int rc = allocateScratch(*desc, checked, opt, deviceScratch))
    return rc;
  for (int p = 0; p < desc->num_phases; ++p) {
    Job job;
    job.desc = desc;
    job.phase = &desc->phases[p];
    job.checked = &checked;
    for (int a = 0; a < checked.tables.numViews; ++a)
      job.views[a] = memrefOf(checked.views[a]);
    job.shape = &checked.phases[p];
    job.items = checked.phases[p].items;
    if (job.items == 0)
      continue;
    bool last = p + 1 == desc->num_phases;
    if (int rc = job.phase->device ? runDevicePhase(job, opt) : runItemPhase(job, opt, !last))
      return rc;
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

extern "C" ATTNC_RT_EXPORT int attnc_rt_run(const attnc_kernel_desc *desc,
                                            const DLTensor *const *args,
                                            const attnc_options *opt) {
  // No C++ exception may cross into C callers. Only building a message can
  // throw (std::bad_alloc), so the handlers below must not allocate.
  try {
    if (!args && desc && desc->abi_version == ATTNC_ABI_VERSION) {
      setError(cat("kernel '", kernelName(*desc), "': attnc_rt_run's args is NULL").c_str());
      return ATTNC_ERR_NULL;
    }
    return launch(desc, args, opt);
  } catch (const std::exception &e) {
    std::snprintf(tlsError, sizeof(tlsError),
                  "attnc_rt_launch: internal error: %s", e.what());
  } catch (...) {
    setError("attnc_rt_launch: internal error");
  }
  return ATTNC_ERR_KERNEL;
}

extern "C" ATTNC_RT_EXPORT int
attnc_rt_launch(const attnc_kernel_desc *desc, const DLTensor *q,
                const DLTensor *k, const DLTensor *v, DLTensor *out,
                DLTensor *lse, const attnc_options *opt) {
  const DLTensor *args[] = {q, k, v, out, lse};
  // An attention kernel's five; another kernel's launch would read past them.
  if (desc && desc->abi_version == ATTNC_ABI_VERSION && desc->num_args != 5) {
    setError(cat("kernel '", kernelName(*desc), "' takes ", desc->num_args,
                 " tensor arguments, not attnc_rt_launch's 5 (q, k, v, out, lse); call "
                 "attnc_rt_run")
                 .c_str());
    return ATTNC_ERR_ABI;
  }
  return attnc_rt_run(desc, args, opt);
}
