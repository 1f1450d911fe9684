//===- AttnBase.td - the attn dialect ----------------------*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The dialect definition and its documentation of the attention semantics every
// backend and the reference evaluator implement.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BASE_TD
#define ATTN_BASE_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Declarative attention variants for the attnc compiler";
  let description = [{
    The `attn` dialect describes one attention variant per kernel, declaratively: the head
    configuration, the element type, the tensor layout, the mask and optional `score_mod` /
    `mask_mod` regions. Everything static lives in attributes; batch size and sequence lengths
    are run-time values of the generated kernel.

    ### Semantics

    For query row `i`, key/value row `j`, batch `b` and head `h`:

    ```
    s[b,h,i,j]   = score_mod(scale * dot(q[b,h,i,:], k[b,g(h),j,:]), b, h, i, j)
    keep[b,h,i,j] = mask(i, j, seq_q, seq_kv) && mask_mod(b, h, i, j)
    p[b,h,i,:]   = softmax_j(keep ? s : -inf)
    out[b,h,i,:] = sum_j p[b,h,i,j] * v[b,g(h),j,:]
    lse[b,h,i]   = log(sum_j exp(keep ? s : -inf))
    ```

    * `scale` defaults to `1 / sqrt(head_dim)`.
    * Grouped-query attention: `g(h) = h / (num_heads / num_kv_heads)`, so query heads
      `[g * r, (g + 1) * r)` share key/value head `g`, with `r = num_heads / num_kv_heads`.
    * `keep == true` means "attend". A row whose every entry is masked out yields `out = 0` and
      `lse = -inf`; no NaN is ever produced for it.
    * `score_mod` is applied to the scaled score before masking; `mask_mod` and the mask
      attribute are combined with a logical and.
    * Scores, the softmax and accumulation are computed in f32 whatever the storage `dtype`;
      `lse` is always f32.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_BASE_TD
