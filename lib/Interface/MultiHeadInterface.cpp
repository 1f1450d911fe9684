//===- MultiHeadInterface.cpp - The multi-head attention family's interface ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Interface/KernelInterface.h"

#include "TensorSpecs.h"

using namespace attnc;

namespace {

int64_t tiles(int64_t n) { return (n + kProjectionTile - 1) / kProjectionTile; }

} // namespace

KernelInterface attnc::multiHeadInterface(const MultiHeadFacts &f) {
  KernelInterface in;
  in.numArgs = f.keyLengths ? 7 : 6;
  in.numParams = ATTNC_P_MULTIHEAD_COUNT;
  int64_t qWidth = f.heads * f.headDim, kvWidth = f.kvHeads * f.headDim;
  in.symbols = {{"batch"},
                {"seq", -1, 0, ATTNC_P_SEQ_Q},
                {"embed_dim", f.embedDim},
                {"heads", f.heads},
                {"kv_heads", f.kvHeads},
                {"head_dim", f.headDim},
                {"qkv_dim", qWidth + 2 * kvWidth},
                {"attn_dim", qWidth},
                {"block_m", kProjectionRows},
                {"block_q", f.blockQ},
                {"qkv_tiles", tiles(qWidth) + 2 * tiles(kvWidth)},
                {"embed_tiles", tiles(f.embedDim)}};
  int32_t unit = ATTNC_TENSOR_UNIT_INNER, code = f.dtypeCode, bits = f.dtypeBits;
  in.tensors = {
      dimsTensor("x", "batch,seq,embed_dim", "batch,seq", 0, unit, code, bits, ATTNC_P_X_STRIDES),
      f.onnx ? dimsTensor("in_proj_weight", "embed_dim,qkv_dim", "embed_dim", 1, unit, code, bits,
                      ATTNC_P_IN_WEIGHT_STRIDES)
             : dimsTensor("in_proj_weight", "qkv_dim,embed_dim", "qkv_dim", 1, unit, code, bits,
                      ATTNC_P_IN_WEIGHT_STRIDES),
      dimsTensor("in_proj_bias", "qkv_dim", "qkv_dim", 2, ATTNC_TENSOR_OPTIONAL, code, bits,
             ATTNC_P_IN_BIAS_STRIDES),
      f.onnx ? dimsTensor("out_proj_weight", "attn_dim,embed_dim", "attn_dim", 3, unit, code, bits,
                      ATTNC_P_OUT_WEIGHT_STRIDES)
             : dimsTensor("out_proj_weight", "embed_dim,attn_dim", "embed_dim", 3, unit, code, bits,
                      ATTNC_P_OUT_WEIGHT_STRIDES),
      dimsTensor("out_proj_bias", "embed_dim", "embed_dim", 4, ATTNC_TENSOR_OPTIONAL, code, bits,
             ATTNC_P_OUT_BIAS_STRIDES),
      dimsTensor("out", "batch,seq,embed_dim", "batch,seq", 5, unit | ATTNC_TENSOR_OUTPUT, code,
             bits, ATTNC_P_EMBED_OUT_STRIDES)};
  if (f.keyLengths)
    in.tensors.push_back(indexTensor("key_lengths", "batch",
                                     "batch: the keys each sequence attends, from its first",
                                     "<=seq", 6, ATTNC_P_KEY_LENGTHS_STRIDES));
  // The attention's tensors, f32 and token-major, its strides where an
  // attention kernel's q, k, v and out take theirs; after the arguments.
  int32_t scratch = ATTNC_TENSOR_SCRATCH | unit, at = in.numArgs;
  in.tensors.push_back(dimsTensor("q", "batch,seq,heads,head_dim", "batch,heads,seq", at, scratch,
                              kDLFloat, 32, ATTNC_P_Q_STRIDES));
  in.tensors.push_back(dimsTensor("k", "batch,seq,kv_heads,head_dim", "batch,kv_heads,seq", at + 1,
                              scratch, kDLFloat, 32, ATTNC_P_K_STRIDES));
  in.tensors.push_back(dimsTensor("v", "batch,seq,kv_heads,head_dim", "batch,kv_heads,seq", at + 2,
                              scratch, kDLFloat, 32, ATTNC_P_V_STRIDES));
  in.tensors.push_back(dimsTensor("attn", "batch,seq,heads,head_dim", "batch,heads,seq", at + 3,
                              scratch, kDLFloat, 32, ATTNC_P_OUT_STRIDES));
  in.phases = {{"qkv", "batch,seq/block_m,qkv_tiles", "b,m,n"},
               {"attention", "batch,heads,seq/block_q", "b,h,q_tile"},
               {"out", "batch,seq/block_m,embed_tiles", "b,m,n"}};
  return in;
}
