//===- AttnOps.td - operations of the attn dialect ---------*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "AttnAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_KernelOp : Attn_Op<"kernel", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "one generated kernel: an exported C symbol wrapping one attention";
  let description = [{
    A kernel becomes one exported function (named after the symbol) in the object file and
    one declaration in the generated C header. Its body holds exactly one `attn.attention`.

    Example:

    ```mlir
    attn.kernel @causal_gqa {
      attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = f32,
                      layout = bhsd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    class AttentionOp getAttention();
  }];
}

def Attn_AttentionOp : Attn_Op<"attention", [
    HasParent<"KernelOp">, IsolatedFromAbove]> {
  let summary = "softmax(score_mod(scale * Q K^T) masked) V for one variant";
  let description = [{
    The whole variant as static parameters, between braces, in any order:

    | parameter | value | meaning |
    |---|---|---|
    | `num_heads` | integer > 0 | query heads |
    | `num_kv_heads` | integer > 0 dividing `num_heads`; default `num_heads` | key/value heads (GQA, MQA = 1) |
    | `head_dim` | integer > 0 | size of each head |
    | `dtype` | `f32`, `f16`, `bf16` | element type of q, k, v, out |
    | `layout` | `bhsd`, `bshd` | tensor layout |
    | `mask` | a mask attribute | which pairs attend |
    | `scale` | float > 0; default `1/sqrt(head_dim)` | multiplies q . k |
    | `max_seq` | `[seq_q, seq_kv]` | optional bound on the run-time lengths |
    | `outputs` | subset of `[out, lse, weights]` | what the kernel writes |

    `weights` is quadratic in the sequence length, so it needs `max_seq` with
    `seq_q * seq_kv <= 16777216`.

    Two optional regions follow, each a single block ending in `attn.yield`:

    * `score_mod`, `^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index)`, yields
      the modified f32 score. Applied to the scaled score before masking (ALiBi, soft-capping,
      relative position bias).
    * `mask_mod`, `^bb0(%b: index, %h: index, %q: index, %kv: index)`, yields an `i1`, true to
      keep. Combined with `mask` by a logical and.

    The regions are isolated from above and compute on scalars (f32, integers, `index`,
    `i1`) with these operations, which every backend and the reference implement:

    * `arith`: `constant`, `addf`, `subf`, `mulf`, `divf`, `remf`, `negf`, `maximumf`,
      `minimumf`, `maxnumf`, `minnumf`, `cmpf`, `addi`, `subi`, `muli`, `divsi`, `divui`,
      `remsi`, `remui`, `floordivsi`, `ceildivsi`, `andi`, `ori`, `xori`, `maxsi`, `minsi`,
      `maxui`, `minui`, `cmpi`, `select`, `index_cast`, `index_castui`, `extsi`, `extui`,
      `trunci`, `sitofp`, `uitofp`, `fptosi`, `fptoui`, `extf`, `truncf`;
    * `math`: `absf`, `absi`, `exp`, `exp2`, `expm1`, `log`, `log2`, `log1p`, `tanh`,
      `sqrt`, `rsqrt`, `sin`, `cos`, `atan`, `erf`, `floor`, `ceil`, `powf`, `fma`.

    The reference evaluates float ops in double precision; kernels evaluate them in f32.
    Integer division or remainder by zero is an error of the kernel call.

    Example, tanh soft-capping with a sliding window:

    ```mlir
    attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                    mask = #attn.sliding_window<left = 255, right = 0>, outputs = [out]}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        attn.yield %r : f32
      }
    ```
  }];
  let arguments = (ins
    I64Attr:$num_heads,
    OptionalAttr<I64Attr>:$num_kv_heads,
    I64Attr:$head_dim,
    TypeAttr:$dtype,
    Attn_Layout:$layout,
    Attn_MaskAttrInterface:$mask,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<DenseI64ArrayAttr>:$max_seq,
    Attn_OutputKind:$outputs);
  let regions = (region MaxSizedRegion<1>:$score_mod, MaxSizedRegion<1>:$mask_mod);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// num_kv_heads, or num_heads when it is not given (plain multi-head attention).
    int64_t getKvHeads() {
      return getNumKvHeadsAttr() ? getNumKvHeadsAttr().getInt() : getHeads();
    }
    /// The integer parameters, signed (I64Attr's accessors are unsigned).
    int64_t getHeads() { return getNumHeadsAttr().getInt(); }
    int64_t getDim() { return getHeadDimAttr().getInt(); }
    ::mlir::LogicalResult verifySequenceBounds();
    bool hasOutput(OutputKind kind) {
      return ::mlir::attn::bitEnumContainsAll(getOutputs(), kind);
    }
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"AttentionOp">]> {
  let summary = "returns the value of a score_mod or mask_mod region";
  let description = [{
    Example: `attn.yield %keep : i1`
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // ATTN_OPS_TD
