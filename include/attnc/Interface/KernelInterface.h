//===- KernelInterface.h - A kernel's tensors, sizes and phases -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Kernel interface v2 as typed C++: what a kernel family's launch takes
// (symbols, tensors, phases of work items; attnc_runtime.h explains each
// field). One function per kernel family builds it from the kernel's facts;
// attn-emit-cpu-entry writes it into every kernel object as the descriptor's
// tables, for every backend alike, and InterfaceTables lays it out as C
// structs for hosts and tests that build descriptors by hand. Plain C++17
// without LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INTERFACE_KERNELINTERFACE_H
#define ATTNC_INTERFACE_KERNELINTERFACE_H

#include "attnc/Runtime/attnc_runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnc {

struct SymbolSpec {
  std::string name;
  int64_t value = -1; // >= 0: fixed
  int64_t max = 0;
  int32_t param = -1;
  int32_t flags = 0;
};

struct TensorSpec {
  std::string name, dims, legend, about, strides, bound;
  int32_t arg = 0, flags = 0, dtypeCode = 0, dtypeBits = 0, strideParam = 0;
  int32_t fill = ATTNC_FILL_ZERO;
};

struct PhaseSpec {
  std::string name, items, index;
  bool onDevice = false; // a device function (all items at once), else an item function
};

struct KernelInterface {
  std::vector<SymbolSpec> symbols;
  std::vector<TensorSpec> tensors;
  std::vector<PhaseSpec> phases;
  int32_t numArgs = 0, numParams = 0;
  /// Views an item function takes: the arguments, then the scratch tensors.
  int32_t numViews() const;
};

/// A tensor a kernel's mods read (a spec's `inputs` entry): its dims as the
/// descriptor spells them ("batch,2*seq_kv-1").
struct ModInputFact {
  std::string name, dims;
  int32_t dtypeCode = 0, dtypeBits = 0;
};

/// The facts of an attention kernel (attn.flash) that its interface depends on.
struct AttentionFacts {
  int64_t heads = 1, kvHeads = 1, headDim = 1, blockQ = 1;
  int64_t maxSeqQ = 0, maxSeqKv = 0; // <= 0: unbounded
  int32_t layout = 0;                // 0: bhsd, 1: bshd
  int32_t outputs = 1;               // bit 0: out, bit 1: lse, bit 2: weights
  int32_t dtypeCode = kDLFloat, dtypeBits = 32;
  bool onDevice = false;             // a grid (device) function instead of a tile function
  int64_t splits = 0;                // > 0: a split-KV decode kernel with this many ranges
  int64_t pageSize = -1;             // decode: 0 kv_lens, > 0 also pages of this many keys
  bool pagesHeadMajor = false;       // pages [num_pages, kv_heads, page_size, head_dim]
  int64_t kvHeadsPerItem = 1;        // decode: KV heads one work item computes
  bool varlen = false;               // packed sequences delimited by cu_seqlens
  std::vector<ModInputFact> inputs;  // tensors the mods read (prefill kernels)
  bool backward = false;             // the backward of this attention (backwardInterface)
};

/// Where a kernel with mod inputs finds batch in params (`outputs`,
/// `varlen` and `pageSize` as in AttentionFacts; `decode`: splits > 0; a
/// `backward` kernel: after its gradients' strides): after the params it has
/// without inputs. Each input's strides, one per dim, follow it in the
/// inputs' order.
int32_t modInputBatchParam(int32_t outputs, bool varlen = false, bool decode = false,
                           int64_t pageSize = -1, bool backward = false);

/// The attention family's interface: tensors q, k, v, out, (with outputs
/// bit 1) lse and (bit 2) weights as arguments 0-5 (5 arguments without
/// weights), params as attnc_param lays them out, and one phase over
/// (batch, heads, seq_q / block_q). A decode kernel (splits > 0) has two
/// scratch tensors after them, o_part [batch, heads, splits, seq_q, head_dim]
/// and lse_part [batch, heads, splits, seq_q] (f32, compact), and two phases:
/// "attention" over (batch, kv_heads, splits), then "merge" over (batch, heads).
/// A decode kernel with per-sequence lengths (pageSize >= 0) takes int32
/// kv_lens [batch] as argument 5; with pages (pageSize > 0) k and v are
/// [num_pages, page_size, kv_heads, head_dim] and int32 block_table
/// [batch, max_pages] is argument 6. A varlen kernel packs the sequences:
/// q and out are [total_q, heads, head_dim], k and v [total_kv, kv_heads,
/// head_dim], lse [heads, total_q], and int32 cu_seqlens_q and cu_seqlens_kv
/// [batch + 1] follow the outputs (arguments 5 and 6, or 4 and 5 without lse);
/// seq_q and seq_kv are the longest sequence's lengths, from the offsets.
/// A kernel's mod inputs follow every other argument (the outputs, a varlen
/// kernel's offsets and kv_lens, a decode kernel's kv_lens and block table;
/// its scratch tensors come after them), in any strides; batch and their
/// strides are passed (modInputBatchParam).
KernelInterface attentionInterface(const AttentionFacts &facts);

/// The attention backward family's interface (attn.flash_backward; `facts`
/// as of its forward, `chunks` its kv_chunks): q, k, v, out (the forward's),
/// lse (f32, the forward's), d_out (out's gradient) as arguments 0-5, d_lse
/// (lse's gradient, f32, optional: NULL for none) as 6, dq, dk and dv
/// (written) as 7-9, in the forward's layout and dtype; the mods'
/// inputs after them, then d_<name> (f32, written, the input's dims and any
/// strides) for each f32 input, then the scratch dq_part [batch, heads,
/// chunks, seq_q, head_dim] and delta [batch, heads, seq_q] (f32), then
/// <name>_part [batch, kv_heads, chunks, <the input's dims>] for each f32
/// input (each dkdv item's share of its gradient). Three phases:
/// "delta" over (batch, heads, seq_q / block_q), D = rowsum(d_out * out) per
/// row, less d_lse's; "dkdv" over (batch, kv_heads, chunks), each item the KV tiles chunk,
/// chunk + chunks, ... (dk and dv rows, and its chunk's dq partial); then
/// "dq" over (batch, heads, seq_q / block_q), which sums the partials in
/// chunk order: the result does not depend on the thread count; then, per
/// f32 input, "d_<name>" over its first dim, which sums the items' shares
/// in item order.
KernelInterface backwardInterface(const AttentionFacts &facts, int64_t chunks);

/// The facts of a linear attention kernel (attn.linear_attention).
struct LinearFacts {
  int64_t heads = 1, kvHeads = 1, headDim = 1, valueDim = 1, blockQ = 64;
  int32_t layout = 0; // 0: bhsd, 1: bshd
  int32_t dtypeCode = kDLFloat, dtypeBits = 32;
  bool causal = false, carry = false;
};

/// The linear attention family's interface: q [.., heads, seq_q, head_dim],
/// k [.., kv_heads, seq_kv, head_dim], v [.., kv_heads, seq_kv, value_dim]
/// and out [.., heads, seq_q, value_dim] (the layout's order; a causal
/// kernel's q, k, v and out share one length, `seq`) as arguments 0-3; with
/// `carry`, the f32 initial_state [batch, kv_heads, head_dim, value_dim]
/// and initial_norm [batch, kv_heads, head_dim] (optional: NULL for 0) and
/// final_state and final_norm (written) as 4-7; a non-causal kernel has
/// kv_state and kv_norm of those shapes as scratch (a causal one keeps its
/// state on the item's stack). Params: attnc_param's linear ones. Phases:
/// causal, "attention" over (batch, kv_heads): the chunks in order, each
/// item every query head of its KV head; non-causal, "state" over (batch,
/// kv_heads) (S and z into the scratch), then "attention" over (batch,
/// heads, seq_q / block_q).
KernelInterface linearInterface(const LinearFacts &facts);

/// The facts of a multi-head attention kernel (attn.multihead_attention).
struct MultiHeadFacts {
  int64_t heads = 1, kvHeads = 1, headDim = 1, embedDim = 1, blockQ = 64;
  int32_t dtypeCode = kDLFloat, dtypeBits = 32;
  bool onnx = false; // MatMul weights [in, out], else nn.Linear's [out, in]
  bool keyLengths = false; // key_padding = lengths: int32 key_lengths [batch]
};

/// The columns of a projection's work item (multi-head attention's and
/// attn.projection's): the weight panel it packs.
constexpr int64_t kProjectionTile = 64;
/// The rows of such an item, in sub-tiles of kProjectionTile: one packed
/// panel serves them all (Zen 3, 768 -> 2304 features at 2048 rows: 64-row
/// items, each packing its own panel, ran at 62-66% of the FMA peak).
constexpr int64_t kProjectionRows = 256;

/// The multi-head attention family's interface: x [batch, seq, embed_dim],
/// in_proj_weight [qkv_dim, embed_dim] (onnx: [embed_dim, qkv_dim]),
/// in_proj_bias [qkv_dim] (optional), out_proj_weight [embed_dim, attn_dim]
/// (onnx: [attn_dim, embed_dim]), out_proj_bias [embed_dim] (optional), out
/// [batch, seq, embed_dim] as arguments 0-5 (qkv_dim = (heads + 2 kv_heads)
/// head_dim, attn_dim = heads head_dim), with keyLengths an int32
/// key_lengths [batch] (each <= seq) as argument 6; scratch q, k, v and attn (f32,
/// [batch, seq, heads or kv_heads, head_dim]). Three phases: "qkv" over
/// (batch, seq / 256, qkv_tiles: q's 64-column tiles, then k's, then v's),
/// "attention" over (batch, heads, seq / block_q), "out" over (batch, seq /
/// 256, embed_dim / 64).
KernelInterface multiHeadInterface(const MultiHeadFacts &facts);

/// The facts of a projection kernel (attn.projection).
struct ProjectionFacts {
  int64_t in = 1, out = 1;
  int32_t dtypeCode = kDLFloat, dtypeBits = 32;
  bool onnx = false; // MatMul weight [in, out], else nn.Linear's [out, in]
};

/// The projection family's interface: x [batch, seq, in_features], weight
/// [out_features, in_features] (onnx: [in_features, out_features]), bias
/// [out_features] (optional), y [batch, seq, out_features] as arguments 0-3;
/// one phase, "project", over (batch, seq / 256, out_features / 64).
KernelInterface projectionInterface(const ProjectionFacts &facts);

/// An interface laid out as the C structs the runtime reads, valid while
/// this object lives (and is not moved from).
class InterfaceTables {
public:
  explicit InterfaceTables(KernelInterface interface);
  InterfaceTables(const InterfaceTables &) = delete;
  InterfaceTables &operator=(const InterfaceTables &) = delete;

  /// Points `desc`'s tables and their counts here; every phase gets `item`
  /// and `device` as its functions, as given (one of them should be NULL).
  void fill(attnc_kernel_desc &desc, attnc_item_fn item, attnc_device_fn device);

private:
  KernelInterface spec;
  std::vector<attnc_symbol_desc> symbols;
  std::vector<attnc_tensor_desc> tensors;
  std::vector<attnc_phase_desc> phases;
};

} // namespace attnc

#endif // ATTNC_INTERFACE_KERNELINTERFACE_H
