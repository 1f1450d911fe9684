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
};

/// The driver's entry points, loaded once; "" or why not.
const Driver *driver(std::string &error) {
  static Driver d;
  static std::string failure = [] {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      return cat("the CUDA driver cannot be loaded (", dlerror(),
                 "); this machine has no NVIDIA driver");
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      return fn != nullptr;
    };
    if (!get(d.init, "cuInit") || !get(d.deviceGetCount, "cuDeviceGetCount") ||
        !get(d.deviceGet, "cuDeviceGet") ||
        !get(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain_v2") ||
        !get(d.errorName, "cuGetErrorName"))
      return std::string("libcuda.so.1 lacks a driver API function attnc needs");
    if (CUresult rc = d.init(0)) {
      const char *name = "?";
      d.errorName(rc, &name);
      return cat("cuInit failed with ", name, " (", rc, "): no usable CUDA device");
    }
    return std::string();
  }();
  error = failure;
  return failure.empty() ? &d : nullptr;
}

} // namespace

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
  const char *name = "?";
  if (CUresult rc = d->deviceGet(&handle, int(device)))
    d->errorName(rc, &name), error = cat("cuDeviceGet(", device, ") failed with ", name);
  else if (CUresult rc = d->primaryCtxRetain(&ctx, handle))
    d->errorName(rc, &name), error = cat("cuDevicePrimaryCtxRetain failed with ", name);
  return contexts[device] = ctx;
}
