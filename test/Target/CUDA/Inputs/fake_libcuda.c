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
