//===- time_calls.c - the C side of the Python call-overhead benchmark ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// call_overhead.py loads this (cc -O2 -shared) with ctypes and times `calls`
// launches of a kernel through attnc_rt_run on DLTensors built once: what a C
// caller pays per call, against which the Python package's call is measured.
//
//===----------------------------------------------------------------------===//
#include "attnc/Runtime/attnc_runtime.h"

#include <time.h>

typedef int (*run_fn)(const attnc_kernel_desc *, const DLTensor *const *,
                      const attnc_options *);

/// Seconds for `calls` launches, or -status of the first that failed.
double attnc_time_calls(run_fn run, const attnc_kernel_desc *desc,
                        const DLTensor *const *args, int threads, int calls) {
  attnc_options options = {threads, 0};
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 0; i < calls; ++i) {
    int status = run(desc, args, &options);
    if (status)
      return -status;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  return (end.tv_sec - start.tv_sec) + 1e-9 * (end.tv_nsec - start.tv_nsec);
}
