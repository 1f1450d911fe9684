/* Runs attnc kernels on raw little-endian input files: the runner that the numeric
 * matrix cross-compiles for targets this machine cannot run (aarch64-neon under
 * qemu-aarch64; compiled_check.py --runner cross, cross_run.py). Built once per target with
 * -DKERNEL_TABLE='"FILE"', FILE a line X(name, tensors) per kernel (its entry's DLTensor
 * arguments: 5 for attention, 6 with kv_lens, 7 with a block table or varlen offsets, 8 with
 * varlen offsets and kv_lens), and linked statically with those kernels' objects and the
 * runtime built for the target: one link for a whole matrix.
 *
 *   raw_runner KERNEL DIR
 *
 * reads DIR/call.txt, a line per argument of the entry in order:
 *   NAME CODE BITS NDIM D0 .. D(NDIM-1) in|out|null
 * reads each input from DIR/NAME.bin (compact, the given DLPack dtype), calls KERNEL
 * through the C ABI on 2 threads and writes each output to DIR/NAME.bin. Exit status 0, or
 * 1 with the runtime's message. */
#include <attnc/Runtime/attnc_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IN const DLTensor *
#define OUT DLTensor *
typedef int (*Kernel5)(IN, IN, IN, OUT, OUT, const attnc_options *);
typedef int (*Kernel6)(IN, IN, IN, OUT, OUT, IN, const attnc_options *);
typedef int (*Kernel7)(IN, IN, IN, OUT, OUT, IN, IN, const attnc_options *);
typedef int (*Kernel8)(IN, IN, IN, OUT, OUT, IN, IN, IN, const attnc_options *);
typedef int (*Kernel9)(IN, IN, IN, OUT, OUT, IN, IN, IN, IN, const attnc_options *);
typedef int (*Kernel10)(IN, IN, IN, OUT, OUT, IN, IN, IN, IN, IN, const attnc_options *);
#define PROTO5(name) int name(IN, IN, IN, OUT, OUT, const attnc_options *);
#define PROTO6(name) int name(IN, IN, IN, OUT, OUT, IN, const attnc_options *);
#define PROTO7(name) int name(IN, IN, IN, OUT, OUT, IN, IN, const attnc_options *);
#define PROTO8(name) int name(IN, IN, IN, OUT, OUT, IN, IN, IN, const attnc_options *);
#define PROTO9(name) int name(IN, IN, IN, OUT, OUT, IN, IN, IN, IN, const attnc_options *);
#define PROTO10(name) int name(IN, IN, IN, OUT, OUT, IN, IN, IN, IN, IN, const attnc_options *);
#define X(name, tensors) PROTO##tensors(name)
#include KERNEL_TABLE
#undef X

static const struct {
  const char *name;
  int tensors;
  void (*fn)(void);
} kKernels[] = {
#define X(name, tensors) {#name, tensors, (void (*)(void))name},
#include KERNEL_TABLE
#undef X
};

enum { kMaxTensors = 10 };

static int lookup(const char *name) {
  for (size_t i = 0; i < sizeof kKernels / sizeof kKernels[0]; ++i)
    if (!strcmp(kKernels[i].name, name))
      return (int)i;
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

/* One argument of the call, as call.txt describes it. */
typedef struct {
  char name[64], role[8];
  int64_t shape[4];
  DLTensor t;
  size_t bytes;
} Arg;

static int readArgs(const char *dir, Arg *args) {
  char path[4096];
  snprintf(path, sizeof path, "%s/call.txt", dir);
  FILE *f = fopen(path, "r");
  int n = 0, code, bits, ndim;
  while (f && n < kMaxTensors && fscanf(f, "%63s %d %d %d", args[n].name, &code, &bits, &ndim) == 4) {
    Arg *a = &args[n++];
    size_t elements = 1;
    for (int d = 0; d < ndim && d < 4; ++d) {
      long long e;
      if (fscanf(f, "%lld", &e) != 1)
        break;
      a->shape[d] = e;
      elements *= (size_t)e;
    }
    if (ndim < 1 || ndim > 4 || fscanf(f, "%7s", a->role) != 1) {
      fprintf(stderr, "raw_runner: malformed %s\n", path);
      exit(2);
    }
    a->bytes = elements * (size_t)bits / 8;
    DLDataType dtype = {(uint8_t)code, (uint8_t)bits, 1};
    DLTensor t = {NULL, {kDLCPU, 0}, ndim, dtype, a->shape, NULL, 0};
    a->t = t;
  }
  if (f)
    fclose(f);
  return n;
}

static int call(int kernel, Arg *args) {
  const DLTensor *t[kMaxTensors] = {0};
  for (int i = 0; i < kKernels[kernel].tensors; ++i)
    t[i] = strcmp(args[i].role, "null") ? &args[i].t : NULL;
  attnc_options opt = {2, NULL};
  DLTensor *out = (DLTensor *)t[3], *lse = (DLTensor *)t[4];
  switch (kKernels[kernel].tensors) {
  case 5:
    return ((Kernel5)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, &opt);
  case 6:
    return ((Kernel6)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, t[5], &opt);
  case 7:
    return ((Kernel7)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, t[5], t[6], &opt);
  case 8:
    return ((Kernel8)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, t[5], t[6], t[7], &opt);
  case 9:
    return ((Kernel9)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, t[5], t[6], t[7], t[8],
                                          &opt);
  default:
    return ((Kernel10)kKernels[kernel].fn)(t[0], t[1], t[2], out, lse, t[5], t[6], t[7], t[8],
                                           t[9], &opt);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: raw_runner KERNEL DIR\n");
    return 2;
  }
  int kernel = lookup(argv[1]);
  const char *dir = argv[2];
  Arg args[kMaxTensors];
  memset(args, 0, sizeof args);
  if (readArgs(dir, args) != kKernels[kernel].tensors) {
    fprintf(stderr, "raw_runner: %s/call.txt does not list the %d arguments of %s\n", dir,
            kKernels[kernel].tensors, argv[1]);
    return 2;
  }
  for (int i = 0; i < kKernels[kernel].tensors; ++i) {
    char file[96];
    snprintf(file, sizeof file, "%s.bin", args[i].name);
    if (!strcmp(args[i].role, "in"))
      args[i].t.data = readAll(dir, file, args[i].bytes);
    else if (!strcmp(args[i].role, "out"))
      args[i].t.data = calloc(1, args[i].bytes ? args[i].bytes : 1);
  }
  int rc = call(kernel, args);
  if (rc != ATTNC_OK) {
    fprintf(stderr, "raw_runner: kernel returned %d: %s\n", rc, attnc_last_error());
    return 1;
  }
  for (int i = 0; i < kKernels[kernel].tensors; ++i) {
    char file[96];
    snprintf(file, sizeof file, "%s.bin", args[i].name);
    if (!strcmp(args[i].role, "out"))
      writeAll(dir, file, args[i].t.data, args[i].bytes);
  }
  printf("raw_runner: code ran: %s\n", attnc_last_target());
  return 0;
}
