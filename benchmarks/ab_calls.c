//===- ab_calls.c - one kernel from two attnc builds, call for call -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A/B of an attention kernel (f32, bhsd, batch 1, outputs out and lse) that
// two attnc builds compiled from the same spec: dlopens both shared objects,
// calls each in ABBA-interleaved rounds (samples of about 50 ms), and prints
// the median and best time per call and B/A. Wall-clock time on a shared VM
// moves by several percent between samples; for a difference smaller than
// that, count instructions instead, which do not move (valgrind has no
// AVX-512: compile for x86-64-avx2):
//
//   cc -O2 -o ab_calls benchmarks/ab_calls.c -ldl
//   OLD/bin/attnc spec.mlir --target x86-64-avx2 --emit=so -o old.so
//   build/bin/attnc spec.mlir --target x86-64-avx2 --emit=so -o new.so
//   ./ab_calls ./old.so ./new.so dense 8 2048 64 15 2      # wall clock (KV_HEADS: GQA)
//   valgrind --tool=callgrind --callgrind-out-file=old.cg ./ab_calls ./old.so ./old.so dense 8 64 64 3 1
//   callgrind_annotate old.cg | grep old.so                 # instructions per function
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { int32_t num_threads; void *stream; } options;
typedef int (*entry_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *, DLTensor *, const options *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 9 && argc != 10) {
    fprintf(stderr, "usage: ab_calls A.so B.so KERNEL HEADS SEQ DIM ROUNDS THREADS [KV_HEADS]\n");
    return 2;
  }
  const char *kernel = argv[3];
  int64_t h = atoll(argv[4]), s = atoll(argv[5]), d = atoll(argv[6]);
  int64_t hkv = argc == 10 ? atoll(argv[9]) : h;
  int rounds = atoi(argv[7]);
  options opt = {atoi(argv[8]), NULL};
  entry_fn fn[2];
  for (int i = 0; i < 2; ++i) {
    void *lib = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
    if (!lib || !(fn[i] = (entry_fn)dlsym(lib, kernel))) {
      fprintf(stderr, "cannot load %s from %s: %s\n", kernel, argv[1 + i], dlerror());
      return 1;
    }
  }
  // q, k, v, out, lse: k and v have the kernel's kv heads.
  int64_t shape[4] = {1, h, s, d}, kvShape[4] = {1, hkv, s, d}, lshape[3] = {1, h, s};
  int64_t *shapes[5] = {shape, kvShape, kvShape, shape, lshape};
  DLTensor t[5];
  for (int i = 0; i < 5; ++i) {
    size_t n = 1;
    for (int j = 0; j < (i == 4 ? 3 : 4); ++j)
      n *= (size_t)shapes[i][j];
    float *buf = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
    for (size_t j = 0; j < n; ++j)
      buf[j] = (float)((j * 2654435761u) % 2000) / 1000.0f - 1.0f;
    memset(&t[i], 0, sizeof t[i]);
    t[i].data = buf;
    t[i].device.device_type = kDLCPU;
    t[i].ndim = i == 4 ? 3 : 4;
    t[i].dtype.code = kDLFloat;
    t[i].dtype.bits = 32;
    t[i].dtype.lanes = 1;
    t[i].shape = shapes[i];
  }
  // Calls per sample: enough for ~50 ms, from a warm-up call of each.
  double t0 = now();
  for (int i = 0; i < 2; ++i)
    if (fn[i](&t[0], &t[1], &t[2], &t[3], &t[4], &opt)) {
      fprintf(stderr, "kernel %c failed\n", 'A' + i);
      return 1;
    }
  double one = (now() - t0) / 2;
  long calls = one > 0.05 ? 1 : (long)(0.05 / (one > 1e-7 ? one : 1e-7));
  double *samples[2] = {malloc(rounds * sizeof(double)), malloc(rounds * sizeof(double))};
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 2; ++k) {
      int i = (r & 1) ? 1 - k : k; // ABBA order
      double start = now();
      for (long c = 0; c < calls; ++c)
        fn[i](&t[0], &t[1], &t[2], &t[3], &t[4], &opt);
      samples[i][r] = (now() - start) / calls;
    }
  double med[2], best[2];
  for (int i = 0; i < 2; ++i) {
    qsort(samples[i], rounds, sizeof(double), cmp);
    med[i] = samples[i][rounds / 2];
    best[i] = samples[i][0];
  }
  printf("%s threads=%d h=%lld s=%lld d=%lld: A median %.3f us best %.3f us | B median %.3f us best %.3f us"
         " | B/A median %.4f best %.4f (%ld calls x %d rounds)\n",
         kernel, opt.num_threads, (long long)h, (long long)s, (long long)d, med[0] * 1e6, best[0] * 1e6,
         med[1] * 1e6, best[1] * 1e6, med[1] / med[0], best[1] / best[0], calls, rounds);
  return 0;
}
