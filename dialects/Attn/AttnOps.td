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

def Attn_KernelFamilyOpInterface : OpInterface<"KernelFamilyOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    An op a kernel body holds in the form the backends lower (attention: `attn.flash`).
    A kernel family is such an op, its reference evaluation and a lowering in each backend
    that supports it; a backend's lowering pass names the op, the backend and the target
    when it has no lowering for it. The host glue is the family's too: the lowering records
    `describeEntry` in `attn.cpu_kernels`, and `attn-emit-cpu-entry` builds the kernel's
    descriptor tables (kernel interface v2) from that record with `interfaceFromEntry`,
    found through the registered op named in it, so the pass knows no family.
  }];
  let methods = [
    InterfaceMethod<"the family's name, as messages spell it", "::llvm::StringRef",
                    "getFamily">,
    InterfaceMethod<[{
        The entry of this op's kernel `name`, whose tensors live on `deviceType` (DLPack's
        device type), as `attn.cpu_kernels` records it: `name`, `op` (this op's name),
        `device_type` where it is not the CPU, and the family's own facts.
      }], "::mlir::DictionaryAttr", "describeEntry",
      (ins "::llvm::StringRef":$name, "int64_t":$deviceType)>,
    StaticInterfaceMethod<[{
        The kernel interface (symbols, tensors, phases) of an entry `describeEntry` wrote;
        an error at `loc` naming what is missing or malformed.
      }], "::mlir::FailureOr<::attnc::KernelInterface>", "interfaceFromEntry",
      (ins "::mlir::Location":$loc, "::mlir::DictionaryAttr":$entry)>,
  ];
}

def Attn_KernelOp : Attn_Op<"kernel", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "one generated kernel: an exported C symbol wrapping one attention";
  let description = [{
    A kernel becomes one exported function (named after the symbol) in the object file and
    one declaration in the generated C header. Its body holds exactly one `attn.attention`
    (the spec) or, after `attn-tile-flash`, exactly one `attn.flash` (its tiled form).

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
    /// The attention of the body, or null when it holds an attn.flash.
    class AttentionOp getAttention();
    /// The tiled form of the body, or null when it holds an attn.attention.
    class FlashOp getFlash();
    /// Whichever of the two the body holds.
    class AttentionSpecOpInterface getSpec();
    /// The body's op in the form backends lower (any family), or null.
    class KernelFamilyOpInterface getCompute();
  }];
}

def Attn_AttentionSpecOpInterface : OpInterface<"AttentionSpecOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    The static parameters and mod regions shared by `attn.attention` (the spec) and
    `attn.flash` (its tiled form): what the reference evaluator, the header writer and
    `explain` read, whichever of the two a kernel holds.
  }];
  let methods = [
    InterfaceMethod<"query heads", "int64_t", "getHeads">,
    InterfaceMethod<"key/value heads (num_heads when not given)", "int64_t", "getKvHeads">,
    InterfaceMethod<"head size", "int64_t", "getDim">,
    InterfaceMethod<"storage element type of q, k, v, out", "::mlir::Type", "getDtype">,
    InterfaceMethod<"tensor layout", "::mlir::attn::Layout", "getLayout">,
    InterfaceMethod<"the mask attribute", "::mlir::attn::MaskAttrInterface", "getMask">,
    InterfaceMethod<"the scale, when given", "::mlir::FloatAttr", "getScaleAttr">,
    InterfaceMethod<"[seq_q, seq_kv] bound, when given",
                    "std::optional<::llvm::ArrayRef<int64_t>>", "getMaxSeq">,
    InterfaceMethod<"what the kernel writes", "::mlir::attn::OutputKind", "getOutputs">,
    InterfaceMethod<"the split-KV decode's num_splits (0: auto), when given",
                    "std::optional<uint64_t>", "getNumSplits">,
    InterfaceMethod<"a decode kernel's KV cache: 0 for contiguous with per-sequence "
                    "lengths (kv_cache = lengths), N for pages of N tokens (kv_cache = "
                    "paged<N>); none for one length for the batch",
                    "std::optional<uint64_t>", "getPageSize">,
    InterfaceMethod<"pages laid out head-major, [num_pages, kv_heads, N, head_dim] "
                    "(kv_cache = paged<N, hnd>), not token-major", "bool",
                    "getPagesHeadMajor">,
    InterfaceMethod<"packed variable-length sequences (varlen = cu_seqlens): q, k, v and "
                    "out are [total, heads, head_dim], delimited by int32 cu_seqlens_q and "
                    "cu_seqlens_kv [batch + 1]", "bool", "getVarlen">,
    InterfaceMethod<"the input tensors the mod bodies read (#attn.input entries), or null",
                    "::mlir::ArrayAttr", "getInputsAttr">,
    InterfaceMethod<"additive (Bahdanau) scores: the f32 input holding their vector v "
                    "(`additive = @v`), or null for dot-product scores",
                    "::mlir::FlatSymbolRefAttr", "getAdditiveAttr">,
    InterfaceMethod<"the score_mod region (empty when absent)", "::mlir::Region &",
                    "getScoreMod">,
    InterfaceMethod<"the mask_mod region (empty when absent)", "::mlir::Region &",
                    "getMaskMod">,
  ];
  let extraSharedClassDeclaration = [{
    bool hasOutput(::mlir::attn::OutputKind kind) {
      return ::mlir::attn::bitEnumContainsAll($_op.getOutputs(), kind);
    }
    /// A decode kernel's KV heads per work item (AttnDialect.h): all that fit
    /// where k and v are token-major (nhd pages, bshd).
    int64_t decodeKvHeadsPerItem() {
      std::optional<uint64_t> page = $_op.getPageSize();
      bool tokenMajor = page && *page > 0 ? !$_op.getPagesHeadMajor()
                                          : $_op.getLayout() == ::mlir::attn::Layout::bshd;
      return ::mlir::attn::decodeKvHeadsPerItem(
          tokenMajor, $_op.getKvHeads(), $_op.getHeads() / $_op.getKvHeads(),
          ::mlir::attn::decodeMaxSeqQ($_op.getMaxSeq()), $_op.getDim());
    }
    /// scale, or its default when not given: 1/sqrt(head_dim) for dot-product
    /// scores, 1 for additive ones (Bahdanau's have none).
    double getScaleOrDefault() {
      ::mlir::FloatAttr scale = $_op.getScaleAttr();
      if (scale)
        return scale.getValueAsDouble();
      return $_op.getAdditiveAttr() ? 1.0 : 1.0 / std::sqrt(double($_op.getDim()));
    }
  }];
}

// The parameters attn.attention and attn.flash share.
defvar Attn_SpecArguments = (ins
    I64Attr:$num_heads,
    OptionalAttr<I64Attr>:$num_kv_heads,
    I64Attr:$head_dim,
    TypeAttr:$dtype,
    Attn_Layout:$layout,
    Attn_MaskAttrInterface:$mask,
    OptionalAttr<F64Attr>:$scale,
    OptionalAttr<DenseI64ArrayAttr>:$max_seq,
    Attn_OutputKind:$outputs,
    OptionalAttr<I64Attr>:$num_splits,
    OptionalAttr<I64Attr>:$page_size,
    UnitAttr:$pages_head_major,
    UnitAttr:$varlen,
    OptionalAttr<TypedArrayAttrBase<Attn_ModInputAttr, "mod inputs">>:$inputs,
    OptionalAttr<FlatSymbolRefAttr>:$additive);

class Attn_SpecOp<string mnemonic, list<Trait> traits = []> : Attn_Op<mnemonic, [
    ParentOneOf<["KernelOp", "MultiHeadAttentionOp"]>, IsolatedFromAbove, Attn_AttentionSpecOpInterface] # traits> {
  let regions = (region MaxSizedRegion<1>:$score_mod, MaxSizedRegion<1>:$mask_mod);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  code specClassDeclaration = [{
    /// num_kv_heads, or num_heads when it is not given (plain multi-head attention).
    int64_t getKvHeads() {
      return getNumKvHeadsAttr() ? getNumKvHeadsAttr().getInt() : getHeads();
    }
    /// The integer parameters, signed (I64Attr's accessors are unsigned).
    int64_t getHeads() { return getNumHeadsAttr().getInt(); }
    int64_t getDim() { return getHeadDimAttr().getInt(); }
    ::mlir::LogicalResult verifySequenceBounds();
  }];
}

def Attn_AttentionOp : Attn_SpecOp<"attention"> {
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
    | `num_splits` | 0 (auto) to 256 | a split-KV decode kernel (below) |
    | `kv_cache` | `lengths`, `paged<N>`, `paged<N, hnd>` (N in 1..256) | a decode kernel's cache (below) |
    | `varlen` | `cu_seqlens` | packed sequences of different lengths (below) |
    | `inputs` | `[name: type [dims], ...]` | tensors the mod bodies read (below) |
    | `additive` | `@v`, an f32 input `[head_dim]` or `[heads, head_dim]` | additive scores (below) |

    `weights` is quadratic in the sequence length, so it needs `max_seq` with
    `seq_q * seq_kv <= 16777216`.

    `num_splits` makes the kernel a decode kernel: a few query positions (`max_seq`'s
    seq_q, 16 when not given) against a long KV cache. The query heads of a KV head
    are computed together (each k and v byte is read once per KV head), the KV length of
    each (batch, KV head) is cut into `num_splits` contiguous ranges of whole tiles (0:
    auto, up to 16 ranges of at least 2048 keys), computed as separate work items, and a
    second phase merges the partial results by their log-sum-exp. The result is the
    same attention; for a given spec it is bit-identical for any thread count.

    `kv_cache` (decode kernels only) gives every sequence of the batch its own KV
    length, an int32 tensor `kv_lens` [batch] (FlashAttention's `cache_seqlens`,
    vLLM's `seq_lens`); the queries are the last seq_q positions of their sequence, so
    bottom-right masks align per sequence. `lengths`: k and v are the usual
    contiguous tensors, each sequence using its first kv_lens[b] keys. `paged<N>`:
    k and v are caches of pages [num_pages, N, num_kv_heads, head_dim] (the vLLM and
    FlashAttention form; FlashInfer's `NHD`), and an int32 `block_table` [batch,
    max_pages] names the page of each sequence's keys N * i .. N * i + N - 1.
    `paged<N, hnd>`: pages [num_pages, num_kv_heads, N, head_dim] (FlashInfer's `HND`,
    vLLM's CPU cache): a KV head's keys of a page are contiguous, which a decode step
    reads at the speed of a head-major contiguous cache. The runtime checks every table entry
    (in [0, num_pages)) and every length (at most the cache's) before any load.

    `varlen = cu_seqlens` packs a batch of sequences of different lengths end to end
    (FlashAttention's `flash_attn_varlen_func`): q and out are `[total_q, num_heads,
    head_dim]`, k and v `[total_kv, num_kv_heads, head_dim]` (so `layout = bshd`), and
    int32 tensors `cu_seqlens_q` and `cu_seqlens_kv` `[batch + 1]` hold where each
    sequence starts: sequence b is rows `cu_seqlens[b] .. cu_seqlens[b + 1] - 1` (non-
    decreasing offsets; empty sequences allowed). `lse` is `[num_heads, total_q]`. Each
    sequence is attended alone: masks and mods see its index as `b` and positions within
    it as `q` and `kv`, so bottom-right masks align per sequence. `max_seq` bounds each
    sequence's lengths; the runtime takes the longest from cu_seqlens (no other length is
    passed) and checks every offset before any load. With `kv_cache = lengths` (no
    `num_splits` needed here) an int32 `kv_lens` [batch] after the offsets says how many
    of its keys each sequence uses, from the start of its rows in k and v
    (FlashAttention's `seqused_k`): the sequence is attended as if it had that many keys,
    and a count over its span in `cu_seqlens_kv` is an error before any load.

    `additive = @v` makes the scores additive (Bahdanau's `v^T tanh(W_s s + W_h h)`, with q
    and k already projected, d_a = head_dim): `scale * sum_d v[d] tanh(q_d + k_d)`, where
    `v` is an f32 input declared in `inputs` as `[head_dim]` or `[heads, head_dim]` (one
    vector per head). `scale` defaults to 1 here. The masks, mods, softmax and outputs are
    those of dot-product scores; no seq_q x seq_kv x head_dim tensor exists.

    Two optional regions follow, each a single block ending in `attn.yield`:

    * `score_mod`, `^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index)`, yields
      the modified f32 score. Applied to the scaled score before masking (ALiBi, soft-capping,
      relative position bias).
    * `mask_mod`, `^bb0(%b: index, %h: index, %q: index, %kv: index)`, yields an `i1`, true to
      keep. Combined with `mask` by a logical and.

    `inputs` declares up to 8 extra input tensors the bodies read, each `name: type [dims]`
    with type `i32` or `f32` and each dim `[S *] symbol [+ C | - C]` over `batch`, `heads`,
    `kv_heads`, `seq_q`, `seq_kv`, `head_dim` (S in 1..64, C in 0..64): document ids of a
    packed batch `document_id: i32 [batch, seq_kv]`, per-head ALiBi slopes `slopes: f32
    [heads]`, a relative-position bias `bias: f32 [heads, seq_q + seq_kv]`, a prefix length
    per batch `prefix: i32 [batch]`. They follow every other argument in the C ABI, in this
    order; with `varlen = cu_seqlens`, `seq_q` and `seq_kv` are the longest sequence's; a
    paged KV cache has no `seq_kv`.
    A body reads one element with `%x = attn.load @name[%i, %j] : type` (`index`
    operands, one per dim). An index outside the shape is a verifier error where it is a
    constant and the extent is static, else an error of the kernel call (ATTNC_ERR_INDEX,
    naming the input); it is never read out of bounds.

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
  let arguments = Attn_SpecArguments;
  let extraClassDeclaration = specClassDeclaration;
}

def Attn_FlashOp : Attn_SpecOp<"flash",
    [DeclareOpInterfaceMethods<Attn_KernelFamilyOpInterface>]> {
  let summary = "the tiled Flash form of one attention: Q tiles x KV tiles, online softmax";
  let description = [{
    The target-neutral tiled form every backend starts from (`--emit=tiled`). It holds the
    normalized spec (`num_kv_heads` and `scale` filled in, causal written as a window, masks
    simplified: see `attn-normalize`) plus the tile sizes `block_q` and `block_kv`, and
    means the following computation, for every batch `b`, head `h` with key/value head
    `g = h / (num_heads / num_kv_heads)`, and query tile `Q_t` (rows
    `[t * block_q, min(seq_q, (t + 1) * block_q))`):

    ```
    m_i = -inf, l_i = 0, acc_i = 0                      for every row i of Q_t
    for each KV tile K_u = [u * block_kv, min(seq_kv, (u + 1) * block_kv)):
      class = mask.classifyTile(Q_t x K_u)             full / partial / empty
      if class == empty: continue                       never computed
      s_ij = score_mod(scale * q_i . k_j, b, h, i, j)
      if class == partial: s_ij = keep(i, j) ? s_ij : -inf
                           (mask attribute and mask_mod, per element)
      m'_i  = max(m_i, max_j s_ij)
      c_i   = m'_i == -inf ? 0 : m'_i                  (rows with nothing kept yet)
      p_ij  = exp(s_ij - c_i)
      l_i   = l_i * exp(m_i - c_i) + sum_j p_ij
      acc_i = acc_i * exp(m_i - c_i) + sum_j p_ij v_j
      m_i   = m'_i
    out_i = l_i == 0 ? 0 : acc_i / l_i
    lse_i = l_i == 0 ? -inf : m_i + log(l_i)
    ```

    A tile is `full` when the mask keeps every pair of it and there is no `mask_mod`,
    `empty` when the mask keeps none, `partial` otherwise; the class comes from the mask
    attribute's tile rule (index arithmetic on the tile bounds, `MaskAttrInterface`), so
    no `seq_q x seq_kv` mask ever exists. The result equals `attn.attention`'s up to
    rounding: the reference evaluator executes this op tile by tile to check exactly that.
    Tiles at the end of a sequence are shorter; `block_q` and `block_kv` need not divide
    the lengths. With `weights` among the outputs, each query tile's scores are computed
    again once `m_i` and `l_i` are final: `w_ij = l_i == 0 ? 0 : p_ij / l_i` with
    `p_ij = exp(s_ij - m_i)` (0 where masked), so the weights are the probabilities `out`
    averaged with.

    Example:

    ```mlir
    attn.kernel @causal {
      attn.flash {num_heads = 8, num_kv_heads = 8, head_dim = 64, dtype = f32,
                  layout = bhsd, mask = #attn.sliding_window<left = inf, right = 0>,
                  scale = 0.125, outputs = [out, lse], block_q = 64, block_kv = 64}
    }
    ```
  }];
  let arguments = !con(Attn_SpecArguments, (ins I64Attr:$block_q, I64Attr:$block_kv));
  let extraClassDeclaration = specClassDeclaration # [{
    /// The tile sizes, signed.
    int64_t getTileQ() { return getBlockQAttr().getInt(); }
    int64_t getTileKv() { return getBlockKvAttr().getInt(); }
  }];
}

def Attn_FlashBackwardOp : Attn_SpecOp<"flash_backward",
    [DeclareOpInterfaceMethods<Attn_KernelFamilyOpInterface>]> {
  let summary = "the tiled backward of one attention: dq, dk, dv (FlashAttention-2 style)";
  let description = [{
    What `attn-tile-flash` makes of a spec with `outputs = [dq, dk, dv]`: the normalized spec
    plus tile sizes `block_q`, `block_kv` and `kv_chunks`, meaning, for every batch `b` and
    KV head `g`, with `P = exp(s - lse)` recomputed from the forward's `lse` (0 where masked
    or where the row keeps nothing) and `s` the masked, score_mod'ed scaled score:

    ```
    D_i = sum_d d_out_id * out_id                        (per query row)
    for chunk c in [0, kv_chunks), for KV tiles u = c, c + kv_chunks, ... :
      for each query head h of g, each query tile Q_t not empty for K_u:
        dP_ij = d_out_i . v_j
        dS_ij = P_ij (dP_ij - D_i) * score_mod'(scale q_i . k_j) * scale
        dv_j += sum_i P_ij d_out_i ;  dk_j += sum_i dS_ij q_i
        dq_part[c]_i += sum_j dS_ij k_j
    dq_i = sum_c dq_part[c]_i                            (in chunk order)
    ```

    Each chunk's dq partial is its own, and they are added in chunk order, so the result
    does not depend on the thread count; `kv_chunks` bounds the work items per (batch, KV
    head) and the f32 scratch (kv_chunks x dq).
  }];
  let arguments = !con(Attn_SpecArguments,
                       (ins I64Attr:$block_q, I64Attr:$block_kv, I64Attr:$kv_chunks));
  let extraClassDeclaration = specClassDeclaration # [{
    int64_t getTileQ() { return getBlockQAttr().getInt(); }
    int64_t getTileKv() { return getBlockKvAttr().getInt(); }
    int64_t getChunks() { return getKvChunksAttr().getInt(); }
  }];
}

def Attn_LinearAttentionOp : Attn_Op<"linear_attention", [
    HasParent<"KernelOp">, DeclareOpInterfaceMethods<Attn_KernelFamilyOpInterface>]> {
  let summary = "linear attention phi(Q) (phi(K)^T V), non-causal or causal chunked, with a carried state";
  let description = [{
    Linear attention (Katharopoulos et al. 2020): the softmax kernel exp(q . k) replaced by
    phi(q) . phi(k) for a feature map phi, so the keys and values fold into a state of
    head_dim x value_dim per KV head and the cost is linear in the sequence length. For
    batch `b`, query head `h` and its KV head `g = h / (num_heads / num_kv_heads)`, with
    `Q = scale * phi(q)` and `K = phi(k)` per row:

    ```
    S = S_0 + sum_j K_j^T v_j      z = z_0 + sum_j K_j          (j: every key, or j <= i)
    out_i = Q_i S / (Q_i . z + eps)     (normalize = true)
    out_i = Q_i S                       (normalize = false)
    ```

    Non-causal (`causal = false`): every key, S built first. Causal (`causal = true`): keys
    j <= i, q, k and v of one length `seq`; computed in chunks of `chunk` rows (32, 64 or
    128; default 64; a schedule's `chunk` replaces it, attn-normalize's `linear-chunk`):
    within a chunk the masked product (Q K^T) V, across chunks the state, updated once per
    chunk. S_0 and z_0 are 0, or with `state = carry` the tensors
    `initial_state` [batch, num_kv_heads, head_dim, value_dim] and `initial_norm` [batch,
    num_kv_heads, head_dim] (f32; either may be NULL for zeros), and the kernel writes the
    state after the last row to `final_state` and `final_norm`: a prefill followed by calls
    of one row each (recurrent decode steps), each given the previous call's final state,
    computes the same as one call over the whole sequence.

    | parameter | value | meaning |
    |---|---|---|
    | `num_heads` | integer > 0 | query heads |
    | `num_kv_heads` | integer > 0 dividing `num_heads`; default `num_heads` | key/value heads |
    | `head_dim` | 1 to 256 | size of q and k rows (d_k) |
    | `value_dim` | 1 to 256; default `head_dim` | size of v and out rows (d_v) |
    | `dtype` | `f32`, `f16`, `bf16` | element type of q, k, v, out (the state is f32) |
    | `layout` | `bhsd`, `bshd` | tensor layout |
    | `feature_map` | `identity`, `elu1`, `relu` | phi |
    | `causal` | `true`, `false`; default `false` | keys j <= i only |
    | `normalize` | `true`, `false`; default `true` | divide by Q_i . z + eps |
    | `scale` | float > 0; default 1 | multiplies phi(q) |
    | `eps` | float >= 0; default 1e-6 | added to the normalizer |
    | `chunk` | 32, 64, 128 (causal) | rows per chunk |
    | `state` | `carry` (causal) | take and return the state |

    Example, a causal elu + 1 linear attention that carries its state:

    ```mlir
    attn.kernel @linear {
      attn.linear_attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                             feature_map = elu1, causal = true, state = carry}
    }
    ```
  }];
  let arguments = (ins I64Attr:$num_heads, OptionalAttr<I64Attr>:$num_kv_heads,
                   I64Attr:$head_dim, OptionalAttr<I64Attr>:$value_dim, TypeAttr:$dtype,
                   Attn_Layout:$layout, Attn_FeatureMap:$feature_map, UnitAttr:$causal,
                   UnitAttr:$unnormalized, OptionalAttr<F64Attr>:$scale,
                   OptionalAttr<F64Attr>:$eps, OptionalAttr<I64Attr>:$chunk,
                   UnitAttr:$carry_state);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getHeads() { return getNumHeadsAttr().getInt(); }
    int64_t getKvHeads() {
      return getNumKvHeadsAttr() ? getNumKvHeadsAttr().getInt() : getHeads();
    }
    int64_t getDim() { return getHeadDimAttr().getInt(); }
    int64_t getValueDimOrDefault() {
      return getValueDimAttr() ? getValueDimAttr().getInt() : getDim();
    }
    bool getNormalize() { return !getUnnormalized(); }
    double getScaleOrDefault() { return getScaleAttr() ? getScaleAttr().getValueAsDouble() : 1.0; }
    double getEpsOrDefault() { return getEpsAttr() ? getEpsAttr().getValueAsDouble() : 1e-6; }
    int64_t getChunkOrDefault() { return getChunkAttr() ? getChunkAttr().getInt() : 64; }
  }];
}

def Attn_MultiHeadAttentionOp : Attn_Op<"multihead_attention", [
    HasParent<"KernelOp">, SingleBlock, NoTerminator,
    DeclareOpInterfaceMethods<Attn_KernelFamilyOpInterface>]> {
  let summary = "multi-head attention from X: the packed QKV projection, an attention, the output projection";
  let description = [{
    `Concat(head_1 .. head_h) W_O + b_O` with `head_i = Attention(X W_Q_i + b_Q_i, X W_K_i +
    b_K_i, X W_V_i + b_V_i)` (self-attention: q, k and v from one X [batch, seq, embed_dim]),
    `nn.MultiheadAttention`'s and ONNX Runtime's computation. The attention is the spec in the
    body, an `attn.attention` with any mask and mods, GQA and scale: its num_heads,
    num_kv_heads and head_dim size the projections; it must have `dtype = f32` (it runs on the
    projections' f32 results), `layout = bshd` and `outputs = [out]`.

    | parameter | value | meaning |
    |---|---|---|
    | `embed_dim` | 1 to 2048 | X's and out's rows (E) |
    | `dtype` | `f32`, `f16`, `bf16` | X, the weights, the biases and out |
    | `weights` | `pytorch` (default), `onnx` | the weights' layout (below) |
    | `key_padding` | `none` (default), `lengths` | keys past each sequence's length masked |

    The kernel takes `(x, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, out,
    opt)`; either bias may be NULL (none). `key_padding = lengths` adds an int32 `key_lengths
    [batch]` after `out` (ONNX Runtime's 1-d `mask_index`, the right-padded form of
    `nn.MultiheadAttention`'s `key_padding_mask`): sequence b attends its first
    `key_lengths[b]` keys (0 to seq; a row with no key is 0), with the body's mask, which must
    be aligned top-left. With H heads, H_kv KV heads and head_dim D:
    `pytorch` weights are `nn.Linear`'s, `in_proj_weight` [(H + 2 H_kv) D, E] and
    `out_proj_weight` [E, H D]; `onnx` weights are MatMul's, [E, (H + 2 H_kv) D] and [H D, E].
    The biases are [(H + 2 H_kv) D] and [E]. The projections are computed by attnc
    (register-blocked products, f32 accumulation), not a BLAS.

    Example, BERT-base self-attention:

    ```mlir
    attn.kernel @bert_attention {
      attn.multihead_attention {embed_dim = 768, dtype = f32, weights = pytorch} {
        attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                        mask = #attn.full, outputs = [out]}
      }
    }
    ```
  }];
  let arguments = (ins I64Attr:$embed_dim, TypeAttr:$dtype, Attn_WeightLayout:$weight_layout,
                       UnitAttr:$key_lengths);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getEmbedSize() { return getEmbedDimAttr().getInt(); }
    /// The attention of the body (attn.attention, or after attn-tile-flash attn.flash).
    AttentionSpecOpInterface getAttention();
    bool isOnnx() { return getWeightLayout() == WeightLayout::onnx; }
    /// key_padding = lengths: an int32 key_lengths [batch] argument.
    bool hasKeyLengths() { return getKeyLengths(); }
  }];
}

def Attn_ProjectionOp : Attn_Op<"projection", [
    HasParent<"KernelOp">, DeclareOpInterfaceMethods<Attn_KernelFamilyOpInterface>]> {
  let summary = "a linear projection y = x W^T + b over [batch, seq, in_features] (nn.Linear)";
  let description = [{
    `y = x W^T + b` (`nn.Linear`) or, with `weights = onnx`, `y = x W + b` (ONNX MatMul then
    Add) for x [batch, seq, in_features] and y [batch, seq, out_features]: the products of
    `attn.multihead_attention` as a kernel of their own, so that a model can compose its
    projections and an `attn.attention` kernel (the QKV projection's y, viewed as q, k and
    v, is a `bshd` attention's input) and compare that with the fused op.

    | parameter | value | meaning |
    |---|---|---|
    | `in_features` | 1 to 2048 | x's rows (K) |
    | `out_features` | 1 to 1048576 | y's rows (N) |
    | `dtype` | `f32`, `f16`, `bf16` | x, the weight, the bias and y (f32 accumulation) |
    | `weights` | `pytorch` (default), `onnx` | `weight` [out, in] (y = x W^T) or [in, out] (y = x W) |

    The kernel takes `(x, weight, bias, y, opt)`; `bias` [out_features] may be NULL (none).
    x and y may be strided views (unit inner stride), so y may be a slice of a wider tensor.

    Example, BERT-base's packed QKV projection:

    ```mlir
    attn.kernel @qkv_projection {
      attn.projection {in_features = 768, out_features = 2304, dtype = f32, weights = pytorch}
    }
    ```
  }];
  let arguments = (ins I64Attr:$in_features, I64Attr:$out_features, TypeAttr:$dtype,
                       Attn_WeightLayout:$weight_layout);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getIn() { return getInFeaturesAttr().getInt(); }
    int64_t getOut() { return getOutFeaturesAttr().getInt(); }
    bool isOnnx() { return getWeightLayout() == WeightLayout::onnx; }
  }];
}

def Attn_LoadOp : Attn_Op<"load", [ParentOneOf<["AttentionOp", "FlashOp", "FlashBackwardOp"]>]> {
  let summary = "reads one element of a spec's input tensor in a score_mod or mask_mod body";
  let description = [{
    `%d = attn.load @document_id[%b, %q] : i32` reads element (b, q) of the input the spec
    declares as `document_id` (its `inputs`). One `index` operand per dim; the result has the
    input's element type. An index outside the input's shape at run time makes the kernel call
    fail with ATTNC_ERR_INDEX (the reference reports it too); no element outside is read.
  }];
  let arguments = (ins FlatSymbolRefAttr:$input, Variadic<Index>:$indices);
  let results = (outs AnyTypeOf<[I32, F32]>:$result);
  let assemblyFormat = "$input `[` $indices `]` attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The #attn.input this load reads, from its spec (null when not declared).
    ::mlir::attn::ModInputAttr getInputDecl();
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, ReturnLike, Terminator, ParentOneOf<["AttentionOp", "FlashOp", "FlashBackwardOp"]>]> {
  let summary = "returns the value of a score_mod or mask_mod region";
  let description = [{
    Example: `attn.yield %keep : i1`
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // ATTN_OPS_TD
