/* Prints the layout of the C ABI structs the Python package mirrors in ctypes
 * (tools/python/attnc/_abi.py): "STRUCT FIELD OFFSET" per field, then "STRUCT
 * size SIZE"; abi-layout.test compares it with the package's own listing. */
#include <attnc/Runtime/attnc_runtime.h>

#include <stddef.h>
#include <stdio.h>

#define FIELD(type, field) printf("%s %s %zu\n", NAME, #field, offsetof(STRUCT, field));
#define SIZE printf("%s size %zu\n", NAME, sizeof(STRUCT));

int main(void) {
#define STRUCT attnc_kernel_desc
#define NAME "attnc_kernel_desc"
  ATTNC_KERNEL_DESC_FIELDS(FIELD) SIZE
#undef STRUCT
#undef NAME
#define STRUCT attnc_symbol_desc
#define NAME "attnc_symbol_desc"
  ATTNC_SYMBOL_DESC_FIELDS(FIELD) SIZE
#undef STRUCT
#undef NAME
#define STRUCT attnc_tensor_desc
#define NAME "attnc_tensor_desc"
  ATTNC_TENSOR_DESC_FIELDS(FIELD) SIZE
#undef STRUCT
#undef NAME
#define STRUCT attnc_phase_desc
#define NAME "attnc_phase_desc"
  ATTNC_PHASE_DESC_FIELDS(FIELD) SIZE
#undef STRUCT
#undef NAME
#define STRUCT attnc_options
#define NAME "attnc_options"
  FIELD(, num_threads) FIELD(, stream) SIZE
#undef STRUCT
#undef NAME
#define STRUCT DLTensor
#define NAME "DLTensor"
  FIELD(, data) FIELD(, device) FIELD(, ndim) FIELD(, dtype) FIELD(, shape) FIELD(, strides)
  FIELD(, byte_offset) SIZE
  printf("ATTNC_ABI_VERSION %d\nATTNC_DESCRIBE_PREFIX %s\n", ATTNC_ABI_VERSION,
         ATTNC_DESCRIBE_PREFIX);
  return 0;
}
