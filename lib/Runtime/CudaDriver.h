//===- CudaDriver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The few driver calls the runtime makes itself, through dlopen, so that a
// CUDA kernel object links and its argument checks run on a machine without
// a driver; calling it there fails with the loader's message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_CUDADRIVER_H
#define ATTNC_LIB_RUNTIME_CUDADRIVER_H

#include <cstdint>
#include <string>

namespace attnc::rt {

/// The primary context of CUDA device `device` (retained once per process
/// and device), or nullptr with `error` set.
void *cudaPrimaryContext(int64_t device, std::string &error);

/// A kernel's status word: an int32 in device memory, seen by the kernel as
/// a memref descriptor (its fields, in order, are kernel parameters).
struct CudaStatusWord {
  uint64_t allocated = 0, aligned = 0;
  int64_t offset = 0, size = 1, stride = 1;
  int32_t value = 0; // what the kernel left in it
};

/// Launches kernel `function` of cubin `image` on `stream` in the primary
/// context of `device` (the module loaded once per context). False with
/// `error` set on failure; `ran` says whether the launch itself was tried
/// (the kernel may have written its outputs). With `status` (whose fields
/// `params` points into), the word is allocated and zeroed on the stream
/// first, and read back into status->value after the kernel: the call then
/// waits for it.
bool cudaLaunch(int64_t device, const void *image, const char *function,
                const unsigned (&grid)[3], unsigned threads, unsigned sharedBytes,
                void *stream, void **params, std::string &error, bool &ran,
                CudaStatusWord *status = nullptr);

/// `bytes` of device memory of `device`, ordered on `stream`
/// (cuMemAllocAsync): false with `error` set on failure. cudaFreeAsync
/// returns them on the stream, after the work queued before it.
bool cudaAllocAsync(int64_t device, size_t bytes, void *stream, uint64_t &address,
                    std::string &error);
void cudaFreeAsync(int64_t device, uint64_t address, void *stream);

/// `bytes` at device `address` copied into `host` once the work queued on
/// `stream` before it is done (the call waits). False with `error` set.
bool cudaCopyToHost(int64_t device, void *host, const void *address, size_t bytes, void *stream,
                    std::string &error);

/// Encodes into `map` (a CUtensorMap: 128 bytes, 64-byte aligned) the TMA
/// view of a 4-d tensor of 16-bit elements at `address`: `dims` innermost
/// first, `strides` in bytes of dims 1-3, `box` elements per copy; the
/// 128-byte swizzle, zero fill out of bounds. False with `error` set.
bool cudaEncodeTensorMap(void *map, void *address, const uint64_t (&dims)[4],
                         const uint64_t (&strides)[3], const uint32_t (&box)[4],
                         std::string &error);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_CUDADRIVER_H
