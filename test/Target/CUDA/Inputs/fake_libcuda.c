/* A stand-in libcuda.so.1 whose cuInit fails with a code the driver has no name for
 * (cuGetErrorName then gives NULL, as NVIDIA's does for unknown codes): the runtime's
 * message must still say what failed. Every other entry point fails the same way. */
#include <stddef.h>
#define FAIL 987654
int cuInit(unsigned flags) { (void)flags; return FAIL; }
int cuGetErrorName(int rc, const char **name) { (void)rc; *name = NULL; return 1; }
int cuGetErrorString(int rc, const char **text) { (void)rc; *text = NULL; return 1; }
int cuDeviceGetCount(int *n) { *n = 0; return FAIL; }
int cuDeviceGet(int *d, int i) { (void)d; (void)i; return FAIL; }
int cuDevicePrimaryCtxRetain(void **c, int d) { (void)c; (void)d; return FAIL; }
int cuCtxPushCurrent_v2(void *c) { (void)c; return FAIL; }
int cuCtxPopCurrent_v2(void **c) { (void)c; return FAIL; }
int cuModuleLoadData(void **m, const void *i) { (void)m; (void)i; return FAIL; }
int cuModuleGetFunction(void **f, void *m, const char *n) { (void)f; (void)m; (void)n; return FAIL; }
int cuFuncSetAttribute(void *f, int a, int v) { (void)f; (void)a; (void)v; return FAIL; }
int cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e,
                   unsigned g, unsigned s, void *st, void **p, void **x) {
  (void)f; (void)a; (void)b; (void)c; (void)d; (void)e; (void)g; (void)s; (void)st;
  (void)p; (void)x;
  return FAIL;
}
int cuMemAlloc_v2(unsigned long long *p, size_t n) { (void)p; (void)n; return FAIL; }
int cuMemFree_v2(unsigned long long p) { (void)p; return FAIL; }
int cuMemsetD32Async(unsigned long long p, unsigned v, size_t n, void *s) {
  (void)p; (void)v; (void)n; (void)s;
  return FAIL;
}
int cuMemcpyDtoHAsync_v2(void *d, unsigned long long p, size_t n, void *s) {
  (void)d; (void)p; (void)n; (void)s;
  return FAIL;
}
int cuStreamSynchronize(void *s) { (void)s; return FAIL; }
int cuMemAllocAsync(unsigned long long *p, size_t n, void *s) {
  (void)p; (void)n; (void)s;
  return FAIL;
}
int cuMemFreeAsync(unsigned long long p, void *s) { (void)p; (void)s; return FAIL; }
