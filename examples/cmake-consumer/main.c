/*===- main.c - calls an attnc kernel built by attnc_add_kernel -----------===*
 *
 * Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===----------------------------------------------------------------------===*
 *
 * Runs causal_gqa (examples/causal_gqa.mlir: 32 heads sharing 8 kv heads,
 * head_dim 128, f32, bhsd, causal bottom-right, outputs out and lse) on
 * batch 1, seq_q = seq_kv = 100, through DLPack tensors, and checks what a
 * caller can check without a reference: the call succeeds, out and lse are
 * finite, row 0 (which sees key 0 only, since seq_q == seq_kv) is exactly
 * that key's value row, and a wrong dtype is refused with a message.
 * Prints "cmake-consumer: ok" and exits 0, or says what failed and exits 1.
 *
 *===----------------------------------------------------------------------===*/

#include "causal_gqa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 1, HEADS = 32, KV_HEADS = 8, HEAD_DIM = 128, SEQ = 100 };

/* A fixed pattern in [-1, 1): the same inputs on every run and machine. */
static void fill(float *data, size_t n, uint32_t seed) {
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    data[i] = (float)(x >> 8) / (float)(1u << 23) - 1.0f;
  }
}

static DLTensor tensor(float *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL; /* compact row-major */
  t.byte_offset = 0;
  return t;
}

static int fail(const char *what) {
  fprintf(stderr, "cmake-consumer: FAIL: %s\n", what);
  return 1;
}

int main(void) {
  int64_t q_shape[4] = {BATCH, HEADS, SEQ, HEAD_DIM};
  int64_t kv_shape[4] = {BATCH, KV_HEADS, SEQ, HEAD_DIM};
  int64_t lse_shape[3] = {BATCH, HEADS, SEQ};
  size_t q_n = (size_t)BATCH * HEADS * SEQ * HEAD_DIM;
  size_t kv_n = (size_t)BATCH * KV_HEADS * SEQ * HEAD_DIM;
  size_t lse_n = (size_t)BATCH * HEADS * SEQ;

  float *q = malloc(q_n * sizeof *q), *k = malloc(kv_n * sizeof *k);
  float *v = malloc(kv_n * sizeof *v), *out = malloc(q_n * sizeof *out);
  float *lse = malloc(lse_n * sizeof *lse);
  if (!q || !k || !v || !out || !lse)
    return fail("out of memory");
  fill(q, q_n, 1);
  fill(k, kv_n, 2);
  fill(v, kv_n, 3);

  DLTensor tq = tensor(q, 4, q_shape), tk = tensor(k, 4, kv_shape);
  DLTensor tv = tensor(v, 4, kv_shape), tout = tensor(out, 4, q_shape);
  DLTensor tlse = tensor(lse, 3, lse_shape);
  attnc_options opt = {0}; /* all cores */

  int rc = causal_gqa(&tq, &tk, &tv, &tout, &tlse, &opt);
  if (rc != ATTNC_OK) {
    fprintf(stderr, "cmake-consumer: FAIL: causal_gqa returned %d: %s\n", rc,
            attnc_last_error());
    return 1;
  }
  /* Which code ran: with several TARGETS, the variant picked for this CPU. */
  printf("cmake-consumer: code ran: %s\n", attnc_last_target());
  for (size_t i = 0; i < q_n; ++i)
    if (!isfinite(out[i]))
      return fail("out is not finite");
  for (size_t i = 0; i < lse_n; ++i)
    if (!isfinite(lse[i]))
      return fail("lse is not finite");

  /* Bottom-right causal with seq_q == seq_kv: row 0 keeps key 0 alone, so its
   * softmax weight is 1 and out[b, h, 0, :] = v[b, h / 4, 0, :]. */
  for (int b = 0; b < BATCH; ++b)
    for (int h = 0; h < HEADS; ++h) {
      const float *o = out + (((size_t)b * HEADS + h) * SEQ + 0) * HEAD_DIM;
      const float *w = v + (((size_t)b * KV_HEADS + h / (HEADS / KV_HEADS)) * SEQ + 0) * HEAD_DIM;
      for (int d = 0; d < HEAD_DIM; ++d)
        if (fabsf(o[d] - w[d]) > 1e-6f) {
          fprintf(stderr,
                  "cmake-consumer: FAIL: out[%d,%d,0,%d] = %.9g, want v[%d,%d,0,%d] = %.9g\n", b,
                  h, d, o[d], b, h / (HEADS / KV_HEADS), d, w[d]);
          return 1;
        }
    }

  /* A wrong dtype is refused before anything is touched, with a message. */
  DLTensor bad = tq;
  bad.dtype.bits = 64;
  rc = causal_gqa(&bad, &tk, &tv, &tout, &tlse, &opt);
  if (rc != ATTNC_ERR_DTYPE) {
    fprintf(stderr, "cmake-consumer: FAIL: f64 q returned %d, want ATTNC_ERR_DTYPE (%d)\n", rc,
            ATTNC_ERR_DTYPE);
    return 1;
  }
  if (strlen(attnc_last_error()) == 0)
    return fail("ATTNC_ERR_DTYPE without a message");

  free(q);
  free(k);
  free(v);
  free(out);
  free(lse);
  printf("cmake-consumer: ok\n");
  return 0;
}
