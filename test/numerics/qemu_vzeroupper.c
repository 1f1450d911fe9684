// Preloaded into user-mode QEMU (the dynamic qemu-aarch64) by cross_run.py when it runs AArch64
// kernels: fmaf and fma clear the upper halves of the vector registers, then call libm's.
//
// Why: QEMU 7.2's TCG emulates SVE vectors of 256 bits and more with 256-bit host registers and
// calls its helpers (one host fmaf per FMA lane) without VZEROUPPER, as the x86-64 ABI asks of
// AVX code that calls SSE code. On Intel cores the SSE code around each fmaf then runs with
// dirty upper state: the SVE cases ran 11x slower than with this shim (bf16_long_rows on
// SVE-512: 17.0 s, 1.55 s; NEON, 128-bit: 1.0 s either way). VZEROUPPER keeps the low 128 bits
// (the arguments) and the ABI lets a callee clobber the rest. Results are libm's, unchanged.
#define _GNU_SOURCE
#include <dlfcn.h>

typedef float (*fmaf_fn)(float, float, float);
typedef double (*fma_fn)(double, double, double);
static fmaf_fn next_fmaf;
static fma_fn next_fma;
static int has_avx;

__attribute__((constructor)) static void init(void) {
  next_fmaf = (fmaf_fn)dlsym(RTLD_NEXT, "fmaf");
  next_fma = (fma_fn)dlsym(RTLD_NEXT, "fma");
  __builtin_cpu_init();
  has_avx = __builtin_cpu_supports("avx");  // without AVX there is no upper state to clear
}

static inline void clear_upper(void) {
  if (has_avx)
    __asm__ volatile("vzeroupper");
}

float fmaf(float a, float b, float c) {
  clear_upper();
  return next_fmaf(a, b, c);
}

double fma(double a, double b, double c) {
  clear_upper();
  return next_fma(a, b, c);
}
