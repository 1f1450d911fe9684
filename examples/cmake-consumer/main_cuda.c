/*===- main_cuda.c - links and calls an attnc CUDA kernel -----------------===*
 *
 * Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===----------------------------------------------------------------------===*
 *
 * cuda_causal_gqa_bf16 (examples/cuda_causal_gqa_bf16.mlir, built for every
 * CUDA target by attnc_add_kernel) links into a plain C program with no CUDA
 * library: the runtime loads the driver when a call gets that far. Called
 * with tensors on the CPU it refuses them (ATTNC_ERR_DEVICE); called with
 * tensors labelled kDLCUDA on a machine without a driver it says there is
 * none. With a GPU, the tensors would come from cudaMalloc or PyTorch
 * (benchmarks/gpu/run.py). Prints what happened; exits 1 on a surprise.
 *
 *===----------------------------------------------------------------------===*/

#include KERNELS_HEADER /* kernels-cuda-sm80.h or kernels-cuda-sm90a.h */

#include <stdio.h>
#include <string.h>

enum { HEADS = 32, KV_HEADS = 8, HEAD_DIM = 128, SEQ = 16 };

static uint16_t q[SEQ * HEADS * HEAD_DIM], k[SEQ * KV_HEADS * HEAD_DIM];
static uint16_t v[SEQ * KV_HEADS * HEAD_DIM], out[SEQ * HEADS * HEAD_DIM];
static float lse[HEADS * SEQ];

static DLTensor tensor(void *data, int ndim, int64_t *shape, DLDeviceType device, int bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = device;
  t.ndim = ndim;
  t.dtype.code = bits == 16 ? kDLBfloat : kDLFloat;
  t.dtype.bits = (uint8_t)bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* Calls the kernel with every tensor on `device`; returns its status. */
static int call(DLDeviceType device) {
  int64_t q_shape[4] = {1, SEQ, HEADS, HEAD_DIM}, kv_shape[4] = {1, SEQ, KV_HEADS, HEAD_DIM};
  int64_t lse_shape[3] = {1, HEADS, SEQ};
  DLTensor tq = tensor(q, 4, q_shape, device, 16), tk = tensor(k, 4, kv_shape, device, 16);
  DLTensor tv = tensor(v, 4, kv_shape, device, 16), to = tensor(out, 4, q_shape, device, 16);
  DLTensor tl = tensor(lse, 3, lse_shape, device, 32);
  int rc = cuda_causal_gqa_bf16(&tq, &tk, &tv, &to, &tl, NULL);
  printf("cmake-consumer-cuda: %s tensors: status %d: %s\n",
         device == kDLCUDA ? "kDLCUDA" : "kDLCPU", rc, rc ? attnc_last_error() : "ok");
  return rc;
}

int main(void) {
  if (call(kDLCPU) != ATTNC_ERR_DEVICE)
    return 1;
  int rc = call(kDLCUDA);
  /* No driver here: ATTNC_ERR_DEVICE. A driver given host pointers: a launch error. */
  return rc == ATTNC_ERR_DEVICE || rc == ATTNC_ERR_KERNEL ? 0 : 1;
}
