/*===- decode.c - calls a split-KV decode kernel built by attnc_add_kernel -===*
 *
 * Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===----------------------------------------------------------------------===*
 *
 * Runs decode_gqa (examples/decode_gqa.mlir: 32 query heads over 8 KV heads,
 * head_dim 128, bf16, num_splits = 0) for one new token of each of 2
 * sequences against a 3000-token cache, through DLPack bfloat16 tensors, as
 * docs/CAbi.md's example calls it, and compares out and lse with the same
 * attention computed here in double (bottom-right causal with one query: every
 * key): out within 2e-2 relative + 8e-3 absolute (bf16 output), lse within
 * 1e-4. Then a query of 5 tokens, beyond the spec's max_seq of 4, must be
 * refused with ATTNC_ERR_LIMIT. Prints "cmake-consumer-decode: ok" and exits
 * 0, or says what failed and exits 1.
 *
 *===----------------------------------------------------------------------===*/

#include "decode_gqa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 2, HEADS = 32, KV_HEADS = 8, DIM = 128, SEQ_KV = 3000 };

/* bf16 bits of a fixed pattern in [-1, 1) (truncated: the values are what they are). */
static void fill(uint16_t *data, size_t n, uint32_t seed) {
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    float f = (float)(x >> 8) / (float)(1u << 23) - 1.0f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    data[i] = (uint16_t)(bits >> 16);
  }
}

static double value(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &wide, sizeof f);
  return f;
}

static DLTensor tensor(void *data, int ndim, int64_t *shape, int bf16) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = bf16 ? kDLBfloat : kDLFloat;
  t.dtype.bits = bf16 ? 16 : 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static int fail(const char *what) {
  fprintf(stderr, "cmake-consumer-decode: FAIL: %s\n", what);
  return 1;
}

/* Row (b, h) of the attention in double: its out into want, its lse returned. */
static double attend(const uint16_t *q, const uint16_t *k, const uint16_t *v, int b, int h,
                     double *want, double *scores) {
  int g = h / (HEADS / KV_HEADS);
  const uint16_t *qr = q + ((size_t)b * HEADS + h) * DIM;
  const uint16_t *kb = k + ((size_t)b * KV_HEADS + g) * SEQ_KV * DIM;
  const uint16_t *vb = v + ((size_t)b * KV_HEADS + g) * SEQ_KV * DIM;
  double max = -INFINITY, sum = 0;
  for (int j = 0; j < SEQ_KV; ++j) {
    double s = 0;
    for (int d = 0; d < DIM; ++d)
      s += value(qr[d]) * value(kb[(size_t)j * DIM + d]);
    scores[j] = s / sqrt((double)DIM);
    max = scores[j] > max ? scores[j] : max;
  }
  memset(want, 0, DIM * sizeof *want);
  for (int j = 0; j < SEQ_KV; ++j) {
    double p = exp(scores[j] - max);
    sum += p;
    for (int d = 0; d < DIM; ++d)
      want[d] += p * value(vb[(size_t)j * DIM + d]);
  }
  for (int d = 0; d < DIM; ++d)
    want[d] /= sum;
  return max + log(sum);
}

int main(void) {
  int64_t q_shape[4] = {BATCH, HEADS, 1, DIM}, kv_shape[4] = {BATCH, KV_HEADS, SEQ_KV, DIM};
  int64_t lse_shape[3] = {BATCH, HEADS, 1};
  size_t nq = (size_t)BATCH * HEADS * DIM, nkv = (size_t)BATCH * KV_HEADS * SEQ_KV * DIM;
  uint16_t *q = malloc(nq * 2), *k = malloc(nkv * 2), *v = malloc(nkv * 2), *out = malloc(nq * 2);
  float *lse = malloc((size_t)BATCH * HEADS * sizeof *lse);
  double *want = malloc(DIM * sizeof *want), *scores = malloc(SEQ_KV * sizeof *scores);
  if (!q || !k || !v || !out || !lse || !want || !scores)
    return fail("out of memory");
  fill(q, nq, 1), fill(k, nkv, 2), fill(v, nkv, 3);
  DLTensor tq = tensor(q, 4, q_shape, 1), tk = tensor(k, 4, kv_shape, 1);
  DLTensor tv = tensor(v, 4, kv_shape, 1), tout = tensor(out, 4, q_shape, 1);
  DLTensor tlse = tensor(lse, 3, lse_shape, 0);
  attnc_options opt = {0, NULL}; /* all cores */
  int rc = decode_gqa(&tq, &tk, &tv, &tout, &tlse, &opt);
  if (rc != ATTNC_OK) {
    fprintf(stderr, "cmake-consumer-decode: FAIL: decode_gqa returned %d: %s\n", rc,
            attnc_last_error());
    return 1;
  }
  for (int b = 0; b < BATCH; ++b)
    for (int h = 0; h < HEADS; ++h) {
      double ref = attend(q, k, v, b, h, want, scores);
      if (fabs(lse[b * HEADS + h] - ref) > 1e-4)
        return fail("lse differs from the attention computed in double");
      for (int d = 0; d < DIM; ++d) {
        double got = value(out[((size_t)b * HEADS + h) * DIM + d]);
        if (fabs(got - want[d]) > 8e-3 + 2e-2 * fabs(want[d]))
          return fail("out differs from the attention computed in double");
      }
    }
  /* Five query tokens: beyond max_seq's 4, refused before anything runs. */
  int64_t long_q[4] = {BATCH, HEADS, 5, DIM};
  size_t n5 = (size_t)BATCH * HEADS * 5 * DIM;
  uint16_t *q5 = calloc(n5, 2), *out5 = calloc(n5, 2);
  float *lse5 = calloc((size_t)BATCH * HEADS * 5, sizeof *lse5);
  int64_t lse5_shape[3] = {BATCH, HEADS, 5};
  DLTensor tq5 = tensor(q5, 4, long_q, 1), tout5 = tensor(out5, 4, long_q, 1);
  DLTensor tlse5 = tensor(lse5, 3, lse5_shape, 0);
  rc = decode_gqa(&tq5, &tk, &tv, &tout5, &tlse5, &opt);
  if (rc != ATTNC_ERR_LIMIT || !strstr(attnc_last_error(), "max_seq_q = 4"))
    return fail("a query longer than max_seq was not refused with ATTNC_ERR_LIMIT");
  free(q), free(k), free(v), free(out), free(lse), free(want), free(scores);
  free(q5), free(out5), free(lse5);
  printf("cmake-consumer-decode: ok\n");
  return 0;
}
