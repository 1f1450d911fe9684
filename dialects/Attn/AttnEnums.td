//===- AttnEnums.td - enums of the attn dialect ------------*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ENUMS_TD
#define ATTN_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Attn_Layout : I32EnumAttr<"Layout", "memory layout of q, k, v and out", [
    I32EnumAttrCase<"bhsd", 0>,
    I32EnumAttrCase<"bshd", 1>
  ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `bhsd`: tensors are `[batch, heads, seq, head_dim]` (PyTorch SDPA's layout).
    `bshd`: tensors are `[batch, seq, heads, head_dim]` (FlashAttention's layout).
    `lse` is `[batch, heads, seq_q]` in both.
  }];
}

def Attn_Alignment : I32EnumAttr<"Alignment",
    "where query row 0 sits relative to key row 0 when seq_q != seq_kv", [
    I32EnumAttrCase<"top_left", 0>,
    I32EnumAttrCase<"bottom_right", 1>
  ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
  let description = [{
    `top_left`: query `i` is aligned with key `i` (PyTorch's `is_causal`).
    `bottom_right`: query `i` is aligned with key `i + seq_kv - seq_q`, so the last query sees
    the last key (FlashAttention 2.1+, decoding with a KV cache).
  }];
}

def Attn_OutputKind : I32BitEnumAttr<"OutputKind", "outputs a kernel writes", [
    I32BitEnumAttrCaseNone<"none">,
    I32BitEnumAttrCaseBit<"out", 0>,
    I32BitEnumAttrCaseBit<"lse", 1>,
    I32BitEnumAttrCaseBit<"weights", 2>,
    I32BitEnumAttrCaseBit<"dq", 3>,
    I32BitEnumAttrCaseBit<"dk", 4>,
    I32BitEnumAttrCaseBit<"dv", 5>
  ]> {
  let cppNamespace = "::mlir::attn";
  let separator = ", ";
  let description = [{
    `out`: the attention output, layout and dtype as `q`.
    `lse`: f32 log-sum-exp per query row, `[batch, heads, seq_q]`.
    `weights`: the softmax probabilities, f32 `[batch, heads, seq_q, seq_kv]`; quadratic in
    size, so only allowed on kernels that bound their sequence lengths (`max_seq`).
    `dq`, `dk`, `dv` (all three, alone): a backward kernel, the gradients of q, k and v from
    q, k, v, the forward's out and lse, and d_out; layout and dtype as q, k and v.
  }];
}

def Attn_FeatureMap : I32EnumAttr<"FeatureMap",
    "the feature map phi linear attention applies to q and k", [
    I32EnumAttrCase<"identity", 0>,
    I32EnumAttrCase<"elu1", 1>,
    I32EnumAttrCase<"relu", 2>
  ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `identity`: phi(x) = x. `elu1`: phi(x) = elu(x) + 1 (x + 1 for x > 0, e^x otherwise;
    Katharopoulos et al.'s, positive). `relu`: phi(x) = max(x, 0). Applied per element.
  }];
}

def Attn_WeightLayout : I32EnumAttr<"WeightLayout",
    "how a multi-head attention's projection weights are laid out", [
    I32EnumAttrCase<"pytorch", 0>,
    I32EnumAttrCase<"onnx", 1>
  ]> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    `pytorch`: as `nn.Linear` weights, [out_features, in_features] (y = x W^T):
    `in_proj_weight` [(heads + 2 kv_heads) head_dim, embed_dim], `out_proj_weight`
    [embed_dim, heads head_dim] (`nn.MultiheadAttention`'s). `onnx`: as MatMul weights,
    [in_features, out_features] (y = x W): [embed_dim, (heads + 2 kv_heads) head_dim] and
    [heads head_dim, embed_dim] (ONNX Runtime's Attention op). The packed rows (or columns)
    are q's heads, then k's, then v's, each head's head_dim together.
  }];
}

#endif // ATTN_ENUMS_TD
