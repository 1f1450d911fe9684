//===- CudaDriver.cpp - the CUDA driver, loaded at run time ---------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// attnc's CUDA kernels run in the primary context of their tensors' device:
// the one PyTorch, JAX and the CUDA runtime API use, so device pointers from
// them are valid in it. Halide's CUDA runtime would otherwise create a
// context of its own.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "Describe.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

using namespace attnc::rt;

namespace {

using CUresult = int;
struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(int *, int);
  CUresult (*primaryCtxRetain)(void **, int);
  CUresult (*errorName)(CUresult, const char **);
  CUresult (*errorString)(CUresult, const char **);
  CUresult (*ctxPush)(void *);
  CUresult (*ctxPop)(void **);
  CUresult (*moduleLoadData)(void **, const void *);
  CUresult (*moduleGetFunction)(void **, void *, const char *);
  CUresult (*funcSetAttribute)(void *, int, int);
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void *, void **, void **);
  CUresult (*memAlloc)(uint64_t *, size_t);
  CUresult (*memFree)(uint64_t);
  CUresult (*memsetD32Async)(uint64_t, unsigned, size_t, void *);
  CUresult (*memcpyDtoHAsync)(void *, uint64_t, size_t, void *);
  CUresult (*streamSynchronize)(void *);
  CUresult (*memAllocAsync)(uint64_t *, size_t, void *);
  CUresult (*memFreeAsync)(uint64_t, void *);
  /// cuTensorMapEncodeTiled (CUDA 12 drivers and later; null before).
  CUresult (*tensorMapEncodeTiled)(void *, int, uint32_t, void *, const uint64_t *,
                                   const uint64_t *, const uint32_t *, const uint32_t *, int, int,
                                   int, int);
};

/// "what failed with NAME (description)" for a driver error; a code the driver has no name
/// for (cuGetErrorName then gives NULL) by its number.
std::string driverError(const Driver &d, const char *what, CUresult rc) {
  const char *name = nullptr, *text = nullptr;
  d.errorName(rc, &name);
  d.errorString(rc, &text);
  if (!name)
    return cat(what, " failed with CUresult ", rc, ", which the driver has no name for");
  return cat(what, " failed with ", name, " (", text ? text : "no description", ")");
}

/// The driver's entry points, loaded once; "" or why not.
const Driver *driver(std::string &error) {
  static Driver d;
  static std::string failure = [] {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      return cat("the CUDA driver cannot be loaded (", dlerror(),
                 "); this machine has no NVIDIA driver");
    const char *missing = nullptr;
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && !missing)
        missing = name;
    };
    // Each name is the driver's exported symbol (what cuda.h's macros expand to), not the
    // API's: cuCtxPushCurrent is cuCtxPushCurrent_v2, cuDevicePrimaryCtxRetain has no _v2.
    get(d.init, "cuInit");
    get(d.deviceGetCount, "cuDeviceGetCount");
    get(d.deviceGet, "cuDeviceGet");
    get(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(d.errorName, "cuGetErrorName");
    get(d.errorString, "cuGetErrorString");
    get(d.ctxPush, "cuCtxPushCurrent_v2");
    get(d.ctxPop, "cuCtxPopCurrent_v2");
    get(d.moduleLoadData, "cuModuleLoadData");
    get(d.moduleGetFunction, "cuModuleGetFunction");
    get(d.funcSetAttribute, "cuFuncSetAttribute");
    get(d.launchKernel, "cuLaunchKernel");
    get(d.memAlloc, "cuMemAlloc_v2");
    get(d.memFree, "cuMemFree_v2");
    get(d.memsetD32Async, "cuMemsetD32Async");
    get(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    get(d.streamSynchronize, "cuStreamSynchronize");
    get(d.memAllocAsync, "cuMemAllocAsync");
    get(d.memFreeAsync, "cuMemFreeAsync");
    if (missing)
      return cat("libcuda.so.1 lacks ", missing, ", a driver API function attnc needs");
    get(d.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    if (CUresult rc = d.init(0))
      return driverError(d, "cuInit", rc) + ": no usable CUDA device";
    return std::string();
  }();
  error = failure;
  return failure.empty() ? &d : nullptr;
}


/// The kernel `function` of cubin `image` in context `ctx`, loaded once per
/// (context, image, function), with its dynamic shared memory limit raised to
/// `sharedBytes` (past the default 48 KiB needs the opt-in).
void *loadFunction(const Driver &d, void *ctx, const void *image, const char *function,
                   int sharedBytes, std::string &error) {
  static std::mutex mutex;
  static std::map<std::tuple<void *, const void *, std::string>, void *> functions;
  std::lock_guard<std::mutex> lock(mutex);
  void *&fn = functions[{ctx, image, function}];
  if (fn)
    return fn;
  void *module = nullptr;
  if (CUresult rc = d.moduleLoadData(&module, image)) {
    error = driverError(d, "cuModuleLoadData", rc);
    return nullptr;
  }
  void *loaded = nullptr;
  if (CUresult rc = d.moduleGetFunction(&loaded, module, function)) {
    error = driverError(d, "cuModuleGetFunction", rc);
    return nullptr;
  }
  constexpr int kMaxDynamicSharedSizeBytes = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  if (CUresult rc = d.funcSetAttribute(loaded, kMaxDynamicSharedSizeBytes, sharedBytes)) {
    error = driverError(d, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", rc);
    return nullptr;
  }
  return fn = loaded;
}

/// A zeroed status word on `stream`.
CUresult allocateStatus(const Driver &d, CudaStatusWord &status, void *stream,
                        std::string &error) {
  if (CUresult rc = d.memAlloc(&status.allocated, sizeof(int32_t))) {
    error = driverError(d, "cuMemAlloc (the kernel's status word)", rc);
    return rc;
  }
  status.aligned = status.allocated;
  CUresult rc = d.memsetD32Async(status.allocated, 0, 1, stream);
  if (rc)
    error = driverError(d, "cuMemsetD32Async (the kernel's status word)", rc);
  return rc;
}

/// The status word after the kernel, into status.value.
CUresult readStatus(const Driver &d, CudaStatusWord &status, void *stream, std::string &error) {
  CUresult rc = d.memcpyDtoHAsync(&status.value, status.allocated, sizeof(int32_t), stream);
  if (rc == 0)
    rc = d.streamSynchronize(stream);
  if (rc)
    error = driverError(d, "reading the kernel's status word", rc);
  return rc;
}

/// body(driver, context) with the primary context of `device` current;
/// false with `error` set where it could not be made current.
template <typename Body> bool inContext(int64_t device, std::string &error, Body body) {
  void *ctx = cudaPrimaryContext(device, error);
  if (!ctx)
    return false;
  const Driver &d = *driver(error);
  if (CUresult rc = d.ctxPush(ctx)) {
    error = driverError(d, "cuCtxPushCurrent", rc);
    return false;
  }
  bool ok = body(d, ctx);
  void *popped = nullptr;
  d.ctxPop(&popped);
  return ok;
}

} // namespace

bool attnc::rt::cudaLaunch(int64_t device, const void *image, const char *function,
                           const unsigned (&grid)[3], unsigned threads, unsigned sharedBytes,
                           void *stream, void **params, std::string &error, bool &ran,
                           CudaStatusWord *status) {
  ran = false;
  return inContext(device, error, [&](const Driver &d, void *ctx) {
    void *fn = loadFunction(d, ctx, image, function, int(sharedBytes), error);
    CUresult rc = 0;
    if (fn && status)
      rc = allocateStatus(d, *status, stream, error);
    if (fn && rc == 0) {
      ran = true;
      rc = d.launchKernel(fn, grid[0], grid[1], grid[2], threads, 1, 1, sharedBytes, stream,
                          params, nullptr);
      if (rc)
        error = driverError(d, "cuLaunchKernel", rc);
    }
    if (fn && status && status->allocated) {
      CUresult read = rc ? 0 : readStatus(d, *status, stream, error);
      d.memFree(status->allocated);
      rc = rc ? rc : read;
    }
    return fn && rc == 0;
  });
}

bool attnc::rt::cudaAllocAsync(int64_t device, size_t bytes, void *stream, uint64_t &address,
                               std::string &error) {
  return inContext(device, error, [&](const Driver &d, void *) {
    CUresult rc = d.memAllocAsync(&address, bytes, stream);
    if (rc)
      error = driverError(d, cat("cuMemAllocAsync of ", bytes, " bytes").c_str(), rc);
    return rc == 0;
  });
}

void attnc::rt::cudaFreeAsync(int64_t device, uint64_t address, void *stream) {
  std::string ignored;
  inContext(device, ignored,
            [&](const Driver &d, void *) { return d.memFreeAsync(address, stream) == 0; });
}

bool attnc::rt::cudaCopyToHost(int64_t device, void *host, const void *address, size_t bytes,
                               void *stream, std::string &error) {
  return inContext(device, error, [&](const Driver &d, void *) {
    CUresult rc = d.memcpyDtoHAsync(host, reinterpret_cast<uintptr_t>(address), bytes, stream);
    if (rc == 0)
      rc = d.streamSynchronize(stream);
    if (rc)
      error = driverError(d, "cuMemcpyDtoHAsync", rc);
    return rc == 0;
  });
}

bool attnc::rt::cudaEncodeTensorMap(void *map, void *address,
                                    const uint64_t (&dims)[4], const uint64_t (&strides)[3],
                                    const uint32_t (&box)[4], std::string &error) {
  const Driver *d = driver(error);
  if (!d)
    return false;
  if (!d->tensorMapEncodeTiled) {
    error = "this CUDA driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)";
    return false;
  }
  // TMA only moves bytes (and fills zero bits out of bounds), so one 16-bit
  // integer type serves f16 and bf16 alike. The enumerators of cuda.h.
  constexpr int kUint16 = 1, kInterleaveNone = 0, kSwizzle128B = 3, kL2Promotion128B = 2,
                kOobFillZero = 0;
  const uint32_t elementStrides[4] = {1, 1, 1, 1};
  if (CUresult rc = d->tensorMapEncodeTiled(map, kUint16, 4, address, dims, strides, box,
                                            elementStrides, kInterleaveNone, kSwizzle128B,
                                            kL2Promotion128B, kOobFillZero)) {
    error = driverError(*d, "cuTensorMapEncodeTiled", rc);
    return false;
  }
  return true;
}

void *attnc::rt::cudaPrimaryContext(int64_t device, std::string &error) {
  const Driver *d = driver(error);
  if (!d)
    return nullptr;
  static std::mutex mutex;
  static std::map<int64_t, void *> contexts;
  std::lock_guard<std::mutex> lock(mutex);
  if (void *ctx = contexts[device])
    return ctx;
  int count = 0, handle = 0;
  d->deviceGetCount(&count);
  if (device < 0 || device >= count) {
    error = cat("the tensors are on CUDA device ", device, ", but this machine has ", count,
                " CUDA device(s)");
    return nullptr;
  }
  void *ctx = nullptr;
  if (CUresult rc = d->deviceGet(&handle, int(device)))
    error = driverError(*d, cat("cuDeviceGet(", device, ")").c_str(), rc);
  else if (CUresult rc = d->primaryCtxRetain(&ctx, handle))
    error = driverError(*d, "cuDevicePrimaryCtxRetain", rc);
  return contexts[device] = ctx;
}
