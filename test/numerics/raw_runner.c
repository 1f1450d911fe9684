/* Runs attnc kernels on raw little-endian input files: the runner that the numeric
 * matrix cross-compiles for targets this machine cannot run (aarch64-neon under
 * qemu-aarch64; compiled_check.py --runner cross, cross_run.py). Built once per target with
 * -DKERNEL_TABLE='"FILE"', FILE a line X(name) per kernel, and linked statically with those
 * kernels' objects and the runtime built for the target: one link for a whole matrix.
 *
 *   raw_runner KERNEL DIR B H_Q S_Q B H_KV S_KV D LAYOUT CODE BITS WANT_LSE
 *
 * reads DIR/q.bin, k.bin, v.bin (the kernel's dtype, q [B, H_Q, S_Q, D] in bhsd order or
 * [B, S_Q, H_Q, D] for bshd, k and v likewise), calls KERNEL through the C ABI and writes
 * DIR/out.bin and, if WANT_LSE, DIR/lse.bin (float32 [B, H_Q, S_Q]). Exit status 0, or 1
 * with the runtime's message. */
#include <attnc/Runtime/attnc_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*KernelFn)(const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out,
                        DLTensor *lse, const attnc_options *opt);

#define X(name)                                                                                 \
  int name(const DLTensor *, const DLTensor *, const DLTensor *, DLTensor *, DLTensor *,       \
           const attnc_options *);
#include KERNEL_TABLE
#undef X

static const struct {
  const char *name;
  KernelFn fn;
} kKernels[] = {
#define X(name) {#name, name},
#include KERNEL_TABLE
#undef X
};

static KernelFn lookup(const char *name) {
  for (size_t i = 0; i < sizeof kKernels / sizeof kKernels[0]; ++i)
    if (!strcmp(kKernels[i].name, name))
      return kKernels[i].fn;
  fprintf(stderr, "raw_runner: no kernel '%s' linked in\n", name);
  exit(2);
}

static void *readAll(const char *dir, const char *name, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  void *data = malloc(bytes ? bytes : 1);
  if (!f || !data || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "raw_runner: cannot read %zu bytes from %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return data;
}

static void writeAll(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "raw_runner: cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 14) {
    fprintf(stderr,
            "usage: raw_runner KERNEL DIR B H_Q S_Q B H_KV S_KV D LAYOUT CODE BITS WANT_LSE\n");
    return 2;
  }
  KernelFn kernel = lookup(argv[1]);
  const char *dir = argv[2];
  int64_t b = atoll(argv[3]), hq = atoll(argv[4]), sq = atoll(argv[5]);
  int64_t hkv = atoll(argv[7]), skv = atoll(argv[8]), d = atoll(argv[9]);
  int bshd = atoi(argv[10]), code = atoi(argv[11]), bits = atoi(argv[12]);
  int wantLse = atoi(argv[13]);
  int64_t qShape[4] = {b, bshd ? sq : hq, bshd ? hq : sq, d};
  int64_t kvShape[4] = {b, bshd ? skv : hkv, bshd ? hkv : skv, d};
  int64_t lseShape[3] = {b, hq, sq};
  size_t elem = (size_t)bits / 8, qBytes = (size_t)(b * hq * sq * d) * elem;
  size_t kvBytes = (size_t)(b * hkv * skv * d) * elem, lseBytes = (size_t)(b * hq * sq) * 4;
  void *q = readAll(dir, "q.bin", qBytes), *k = readAll(dir, "k.bin", kvBytes);
  void *v = readAll(dir, "v.bin", kvBytes), *out = calloc(1, qBytes ? qBytes : 1);
  void *lse = calloc(1, lseBytes ? lseBytes : 1);
  DLDataType dtype = {(uint8_t)code, (uint8_t)bits, 1}, f32 = {kDLFloat, 32, 1};
  DLDevice cpu = {kDLCPU, 0};
  DLTensor tq = {q, cpu, 4, dtype, qShape, NULL, 0}, tk = {k, cpu, 4, dtype, kvShape, NULL, 0};
  DLTensor tv = {v, cpu, 4, dtype, kvShape, NULL, 0};
  DLTensor tout = {out, cpu, 4, dtype, qShape, NULL, 0};
  DLTensor tlse = {lse, cpu, 3, f32, lseShape, NULL, 0};
  attnc_options opt = {2, NULL};
  int rc = kernel(&tq, &tk, &tv, &tout, wantLse ? &tlse : NULL, &opt);
  if (rc != ATTNC_OK) {
    fprintf(stderr, "raw_runner: kernel returned %d: %s\n", rc, attnc_last_error());
    return 1;
  }
  writeAll(dir, "out.bin", out, qBytes);
  if (wantLse)
    writeAll(dir, "lse.bin", lse, lseBytes);
  printf("raw_runner: code ran: %s\n", attnc_last_target());
  return 0;
}
