//===- Passes.td - attnc passes ----------------------------*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnNormalizePass : Pass<"attn-normalize", "::mlir::ModuleOp"> {
  let summary = "Rewrites attention specs into their canonical form";
  let description = [{
    Every later stage expects normalized specs:

    * `num_kv_heads` and `scale` (`1/sqrt(head_dim)`) are filled in when absent;
    * `#attn.causal<a>` becomes `#attn.sliding_window<left = inf, right = 0, align = a>`;
    * a sliding window that covers every position becomes `#attn.full`: both bounds `inf`, or,
      when `max_seq` bounds the lengths, bounds wide enough for every allowed length;
    * nested `and` / `or` are flattened; `#attn.full` is dropped from an `and` and absorbs an
      `or`; duplicate operands are removed; sliding windows of the same alignment merge into
      one (both contain their center, so their intersection and their union are windows
      again), and the merged window is checked for covering everything once more; a
      composition left with one operand becomes that operand.

    The rewrite is idempotent.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

#endif // ATTN_PASSES_TD
