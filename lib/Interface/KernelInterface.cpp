//===- KernelInterface.cpp - The attention family's interface -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Interface/KernelInterface.h"

#include "TensorSpecs.h"

#include <algorithm>
#include <cstring>

using namespace attnc;

namespace {

/// "batch,heads,seq_q,head_dim" and its legend, in the kernel's layout.
struct Dims {
  std::string list, legend;
};

Dims attentionDims(int32_t layout, const char *heads, const char *seq) {
  std::string b = "batch", h = heads, s = seq, d = "head_dim";
  bool bshd = layout == 1;
  std::string order[4] = {b, bshd ? s : h, bshd ? h : s, d};
  Dims dims;
  for (int i = 0; i < 4; ++i) {
    dims.list += (i ? "," : "") + order[i];
    dims.legend += (i ? ", " : "") + order[i];
  }
  dims.legend = (bshd ? "bshd: " : "bhsd: ") + dims.legend;
  return dims;
}

/// A split-KV decode: each (batch, KV head, split) work item writes its
/// range's normalized partial rows and their log-sum-exp to the runtime's
/// scratch tensors, and the merge combines them per (batch, head).
void addDecodeScratch(KernelInterface &in, const AttentionFacts &f) {
  in.symbols.push_back({"splits", f.splits});
  auto scratch = [&](const char *name, const char *dims, const char *strides,
                     int32_t arg, int32_t param) {
    return tensorSpec(name, dims, dims, strides, arg, ATTNC_TENSOR_SCRATCH, kDLFloat, 32,
                      param);
  };
  in.tensors.push_back(scratch("o_part", "batch,heads,splits,seq_q,head_dim",
                               "batch,heads,splits,seq_q", in.numArgs, ATTNC_P_O_PART_STRIDES));
  in.tensors.push_back(scratch("lse_part", "batch,heads,splits,seq_q", "batch,heads,splits",
                               in.numArgs + 1, ATTNC_P_LSE_PART_STRIDES));
  in.numParams = std::max(in.numParams, int32_t(ATTNC_P_DECODE_COUNT));
  in.symbols.push_back({"kv_heads_per_item", f.kvHeadsPerItem});
  in.phases = {{"attention", "batch,kv_heads/kv_heads_per_item,splits", "b,g,split", f.onDevice},
               {"merge", "batch,heads", "b,h", f.onDevice}};
}

/// Per-sequence KV lengths (kv_lens), and with pages the caches' form
/// [num_pages, page_size, kv_heads, head_dim] (head-major pages: [num_pages,
/// kv_heads, page_size, head_dim]) and the block table. The caches' strides go
/// to their params as (page, kv head, position in page), in the places of
/// (batch, kv head, position), whichever order the dims have.
void addKvCache(KernelInterface &in, const AttentionFacts &f) {
  bool paged = f.pageSize > 0;
  in.numArgs = paged ? 7 : 6;
  in.numParams = ATTNC_P_SERVING_COUNT;
  in.tensors.push_back(indexTensor("kv_lens", "batch", "batch: each sequence's KV length",
                                   paged ? "<=max_pages*page_size" : "<=seq_kv", 5,
                                   ATTNC_P_KV_LENS_STRIDES));
  if (!paged)
    return;
  in.symbols.push_back({"num_pages"});
  in.symbols.push_back({"page_size", f.pageSize});
  in.symbols.push_back({"max_pages"});
  // seq_kv is no tensor's extent: the lengths are per sequence.
  for (auto it = in.symbols.begin(); it != in.symbols.end(); ++it)
    if (it->name == "seq_kv") {
      in.symbols.erase(it);
      break;
    }
  for (TensorSpec &t : in.tensors)
    if (t.name == "k" || t.name == "v") {
      t.dims = f.pagesHeadMajor ? "num_pages,kv_heads,page_size,head_dim"
                                : "num_pages,page_size,kv_heads,head_dim";
      t.legend = f.pagesHeadMajor ? "pages: num_pages, kv_heads, page_size, head_dim"
                                  : "pages: num_pages, page_size, kv_heads, head_dim";
      t.strides = "num_pages,kv_heads,page_size";
    }
  in.tensors.push_back(indexTensor("block_table", "batch,max_pages",
                                   "batch, max_pages: each sequence's pages, in key order",
                                   "<num_pages", 6, ATTNC_P_BLOCK_TABLE_STRIDES));
}

/// Packed sequences (varlen): q, k, v and out token-major without a batch
/// dimension, lse [heads, total_q], and the offsets cu_seqlens_q and
/// cu_seqlens_kv [batch + 1], whose largest steps bind seq_q and seq_kv (the
/// longest sequence). Strides go to the (head, seq) places of the params;
/// the batch places stay 0.
void addVarlen(KernelInterface &in) {
  in.numArgs = 7;
  in.numParams = ATTNC_P_VARLEN_COUNT;
  in.symbols.insert(in.symbols.begin() + 1, {{"total_q"}, {"total_kv"}});
  // Each item handles a sequence without keys (out 0, lse -inf for its rows): when no
  // sequence has one, the launch still runs its items, which write only the sequences' rows.
  for (SymbolSpec &s : in.symbols)
    if (s.name == "seq_kv")
      s.flags &= ~ATTNC_SYMBOL_REDUCED;
  for (TensorSpec &t : in.tensors) {
    bool kv = t.name == "k" || t.name == "v";
    const char *heads = kv ? "kv_heads" : "heads", *total = kv ? "total_kv" : "total_q";
    if (t.name == "lse") {
      t.dims = t.strides = std::string("heads,") + total;
      t.legend = std::string("heads, ") + total;
    } else {
      t.dims = std::string(total) + "," + heads + ",head_dim";
      t.legend = std::string("packed: ") + total + ", " + heads + ", head_dim";
      t.strides = std::string(heads) + "," + total;
    }
    t.strideParam += 1; // past the batch stride
  }
  in.tensors.push_back(indexTensor("cu_seqlens_q", "batch+1",
                                   "batch + 1: where each sequence's queries start in q, then "
                                   "the end",
                                   "<=total_q;steps<=seq_q", 5, ATTNC_P_CU_SEQLENS_Q_STRIDES));
  in.tensors.push_back(indexTensor("cu_seqlens_kv", "batch+1",
                                   "batch + 1: where each sequence's keys start in k and v, "
                                   "then the end",
                                   "<=total_kv;steps<=seq_kv", 6, ATTNC_P_CU_SEQLENS_KV_STRIDES));
}

/// Packed sequences with kv_cache = lengths: int32 kv_lens [batch], the keys
/// each sequence uses of its span in k and v (FlashAttention's seqused_k),
/// each within its step of cu_seqlens_kv.
void addVarlenLengths(KernelInterface &in) {
  in.numArgs = 8;
  in.numParams = ATTNC_P_VARLEN_LENGTHS_COUNT;
  in.tensors.push_back(indexTensor("kv_lens", "batch",
                                   "batch: the keys each sequence uses, from the start of its "
                                   "rows in k and v",
                                   "<=seq_kv;each<=steps(cu_seqlens_kv)", 7,
                                   ATTNC_P_VARLEN_KV_LENS_STRIDES));
}

/// The tensors the mods read, after the outputs: any strides (each dim's is
/// passed), and batch passed too, so that a kernel can check every index
/// against its dim's extent.
void addModInputs(KernelInterface &in, const AttentionFacts &f) {
  int32_t batch =
      modInputBatchParam(f.outputs, f.varlen, f.splits > 0, f.pageSize, f.backward);
  in.symbols.front().param = batch;
  in.numParams = batch + 1;
  for (const ModInputFact &m : f.inputs) {
    // A constant dim ("257") is a fixed symbol of that name.
    for (size_t at = 0; at < m.dims.size();) {
      size_t end = std::min(m.dims.find(',', at), m.dims.size());
      std::string dim = m.dims.substr(at, end - at);
      bool constant = !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
      bool known = std::any_of(in.symbols.begin(), in.symbols.end(),
                               [&](const SymbolSpec &s) { return s.name == dim; });
      if (constant && !known)
        in.symbols.push_back({dim, std::stoll(dim)});
      at = end + 1;
    }
    std::string legend = legendOf(m.dims);
    TensorSpec t = tensorSpec(m.name.c_str(), m.dims.c_str(), legend.c_str(), m.dims.c_str(),
                              in.numArgs++, 0, m.dtypeCode, m.dtypeBits, in.numParams);
    t.about = "an input the spec's mods read";
    if (m.dtypeCode == kDLInt)
      t.bound = "any"; // ids or lengths the mod compares: any value is sound
    in.numParams += int32_t(std::count(m.dims.begin(), m.dims.end(), ',') + 1);
    in.tensors.push_back(t);
  }
}

/// The f32 tensors the mods read: their gradients are computed.
std::vector<const ModInputFact *> floatInputs(const AttentionFacts &f) {
  std::vector<const ModInputFact *> tables;
  for (const ModInputFact &m : f.inputs)
    if (m.dtypeCode == kDLFloat)
      tables.push_back(&m);
  return tables;
}

/// d_<name>: an f32 mod input's gradient, an argument written (any strides,
/// each dim's passed).
TensorSpec inputGradient(KernelInterface &in, const ModInputFact &m) {
  std::string legend = legendOf(m.dims);
  TensorSpec t = tensorSpec(("d_" + m.name).c_str(), m.dims.c_str(), legend.c_str(),
                            m.dims.c_str(), in.numArgs++, ATTNC_TENSOR_OUTPUT, kDLFloat, 32,
                            in.numParams);
  t.about = "the gradient of input '" + m.name + "'";
  in.numParams += int32_t(std::count(m.dims.begin(), m.dims.end(), ',') + 1);
  return t;
}

/// <name>_part: each dkdv item's own gradient of an f32 mod input (compact,
/// after the other scratch tensors), and a phase d_<name> over its first
/// dim that sums them in item order.
void addInputPartials(KernelInterface &in, const ModInputFact &m) {
  std::string dims = "batch,kv_heads,chunks," + m.dims, legend = legendOf(dims);
  in.tensors.push_back(tensorSpec((m.name + "_part").c_str(), dims.c_str(), legend.c_str(),
                                  "batch,kv_heads,chunks", in.numViews(), ATTNC_TENSOR_SCRATCH,
                                  kDLFloat, 32, in.numParams));
  in.numParams += 3;
  in.phases.push_back({"d_" + m.name, m.dims.substr(0, m.dims.find(',')), "i", false});
}

} // namespace

int32_t attnc::modInputBatchParam(int32_t outputs, bool varlen, bool decode,
                                  int64_t pageSize, bool backward) {
  if (backward)
    return ATTNC_P_BACKWARD_COUNT;
  // pageSize >= 0: a kv_lens tensor (and with pages > 0 a block table).
  if (varlen)
    return pageSize >= 0 ? ATTNC_P_VARLEN_LENGTHS_COUNT : ATTNC_P_VARLEN_COUNT;
  if (decode)
    return pageSize >= 0 ? ATTNC_P_SERVING_COUNT : ATTNC_P_DECODE_COUNT;
  return outputs & 4 ? ATTNC_P_WEIGHTS_STRIDES + 3 : ATTNC_P_COUNT;
}

KernelInterface attnc::attentionInterface(const AttentionFacts &f) {
  KernelInterface in;
  in.numArgs = 5;
  in.numParams = ATTNC_P_COUNT;
  in.symbols = {
      {"batch"},
      {"heads", f.heads},
      {"kv_heads", f.kvHeads},
      {"seq_q", -1, f.maxSeqQ, ATTNC_P_SEQ_Q},
      {"seq_kv", -1, f.maxSeqKv, ATTNC_P_SEQ_KV, ATTNC_SYMBOL_REDUCED},
      {"head_dim", f.headDim},
      {"block_q", f.blockQ},
  };
  Dims qDims = attentionDims(f.layout, "heads", "seq_q");
  Dims kvDims = attentionDims(f.layout, "kv_heads", "seq_kv");
  // Strides in logical (batch, head, seq) order, whatever the layout.
  auto tensor = [&](const char *name, const Dims &dims, const char *strides, int32_t arg,
                    int32_t flags, int32_t param) {
    TensorSpec t;
    t.name = name;
    t.dims = dims.list;
    t.legend = dims.legend;
    t.strides = strides;
    t.arg = arg;
    t.flags = flags | ATTNC_TENSOR_UNIT_INNER;
    t.dtypeCode = f.dtypeCode;
    t.dtypeBits = f.dtypeBits;
    t.strideParam = param;
    return t;
  };
  const char *qStrides = "batch,heads,seq_q", *kvStrides = "batch,kv_heads,seq_kv";
  in.tensors = {tensor("q", qDims, qStrides, 0, 0, ATTNC_P_Q_STRIDES),
                tensor("k", kvDims, kvStrides, 1, 0, ATTNC_P_K_STRIDES),
                tensor("v", kvDims, kvStrides, 2, 0, ATTNC_P_V_STRIDES),
                tensor("out", qDims, qStrides, 3, ATTNC_TENSOR_OUTPUT, ATTNC_P_OUT_STRIDES)};
  if (f.outputs & 2) {
    // The f32 softmax statistics' result, whatever the kernel's dtype:
    // callers that merge partial attentions need its precision.
    TensorSpec lse;
    lse.name = "lse";
    lse.dims = lse.strides = "batch,heads,seq_q";
    lse.legend = "batch, heads, seq_q";
    lse.about = "the log-sum-exp is float32 whatever the kernel's dtype";
    lse.arg = 4;
    lse.flags = ATTNC_TENSOR_OUTPUT;
    lse.dtypeCode = kDLFloat;
    lse.dtypeBits = 32;
    lse.strideParam = ATTNC_P_LSE_STRIDES;
    lse.fill = ATTNC_FILL_NEG_INF;
    in.tensors.push_back(lse);
  }
  if (f.outputs & 4) {
    // [batch, heads, seq_q, seq_kv] whatever the layout, in the kernel's dtype:
    // seq_q x seq_kv per head, bounded at compile time by max_seq.
    TensorSpec w;
    w.name = "weights";
    w.dims = "batch,heads,seq_q,seq_kv";
    w.legend = "batch, heads, seq_q, seq_kv";
    w.strides = "batch,heads,seq_q";
    w.arg = 5;
    w.flags = ATTNC_TENSOR_OUTPUT | ATTNC_TENSOR_UNIT_INNER;
    w.dtypeCode = f.dtypeCode;
    w.dtypeBits = f.dtypeBits;
    w.strideParam = ATTNC_P_WEIGHTS_STRIDES;
    in.tensors.push_back(w);
    in.numArgs = 6;
    in.numParams = ATTNC_P_WEIGHTS_STRIDES + 3;
  }
  in.phases = {{"attention", "batch,heads,seq_q/block_q", "b,h,q_tile", f.onDevice}};
  if (f.varlen)
    addVarlen(in);
  if (f.varlen && f.pageSize == 0)
    addVarlenLengths(in);
  if (f.splits > 0 && f.pageSize >= 0)
    addKvCache(in, f);
  if (!f.inputs.empty()) // arguments: before the scratch tensors' views
    addModInputs(in, f);
  if (f.splits > 0)
    addDecodeScratch(in, f);
  return in;
}

KernelInterface attnc::backwardInterface(const AttentionFacts &facts, int64_t chunks) {
  AttentionFacts forward = facts;
  forward.outputs = 3;
  forward.inputs.clear(); // after the gradients, below
  KernelInterface in = attentionInterface(forward);
  // The forward's out and lse are read here; every row's lse is needed.
  for (TensorSpec &t : in.tensors) {
    t.flags &= ~ATTNC_TENSOR_OUTPUT;
    if (t.name == "lse")
      t.about = "the forward's log-sum-exp (float32), -inf for a row that keeps no key";
  }
  // seq_kv sizes dk and dv, so an empty KV still runs the items.
  for (SymbolSpec &s : in.symbols)
    if (s.name == "seq_kv")
      s.flags &= ~ATTNC_SYMBOL_REDUCED;
  auto like = [&](const char *name, const char *from, int32_t arg, int32_t flags,
                  int32_t param) {
    TensorSpec t = *std::find_if(in.tensors.begin(), in.tensors.end(),
                                 [&](const TensorSpec &x) { return x.name == from; });
    t.name = name;
    t.arg = arg;
    t.flags = flags | ATTNC_TENSOR_UNIT_INNER;
    t.strideParam = param;
    return t;
  };
  in.tensors.push_back(like("d_out", "out", 5, 0, ATTNC_P_DOUT_STRIDES));
  TensorSpec dLse = like("d_lse", "lse", 6, 0, ATTNC_P_DLSE_STRIDES);
  dLse.flags = ATTNC_TENSOR_OPTIONAL;
  dLse.about = "the loss's gradient on lse (float32); NULL: none";
  in.tensors.push_back(dLse);
  in.tensors.push_back(like("dq", "q", 7, ATTNC_TENSOR_OUTPUT, ATTNC_P_DQ_STRIDES));
  in.tensors.push_back(like("dk", "k", 8, ATTNC_TENSOR_OUTPUT, ATTNC_P_DK_STRIDES));
  in.tensors.push_back(like("dv", "v", 9, ATTNC_TENSOR_OUTPUT, ATTNC_P_DV_STRIDES));
  in.numArgs = 10;
  in.numParams = ATTNC_P_BACKWARD_COUNT;
  if (!facts.inputs.empty()) {
    AttentionFacts mods = facts;
    mods.backward = true;
    addModInputs(in, mods);
  }
  in.symbols.push_back({"chunks", chunks});
  std::vector<const ModInputFact *> tables = floatInputs(facts);
  for (const ModInputFact *m : tables)
    in.tensors.push_back(inputGradient(in, *m));
  in.tensors.push_back(tensorSpec("dq_part", "batch,heads,chunks,seq_q,head_dim",
                                  "batch, heads, chunks, seq_q, head_dim",
                                  "batch,heads,chunks,seq_q", in.numArgs, ATTNC_TENSOR_SCRATCH,
                                  kDLFloat, 32, ATTNC_P_DQ_PART_STRIDES));
  in.tensors.push_back(tensorSpec("delta", "batch,heads,seq_q", "batch, heads, seq_q",
                                  "batch,heads", in.numArgs + 1, ATTNC_TENSOR_SCRATCH, kDLFloat,
                                  32, ATTNC_P_DELTA_STRIDES));
  in.phases = {{"delta", "batch,heads,seq_q/block_q", "b,h,q_tile", false},
               {"dkdv", "batch,kv_heads,chunks", "b,g,chunk", false},
               {"dq", "batch,heads,seq_q/block_q", "b,h,q_tile", false}};
  for (const ModInputFact *m : tables)
    addInputPartials(in, *m);
  return in;
}

int32_t KernelInterface::numViews() const {
  int32_t views = numArgs;
  for (const TensorSpec &t : tensors)
    views = std::max(views, t.arg + 1);
  return views;
}

InterfaceTables::InterfaceTables(KernelInterface interface) : spec(std::move(interface)) {
  for (const SymbolSpec &s : spec.symbols)
    symbols.push_back({s.name.c_str(), s.value, s.max, s.param, s.flags});
  for (const TensorSpec &t : spec.tensors)
    tensors.push_back({t.name.c_str(), t.dims.c_str(), t.legend.c_str(),
                       t.about.empty() ? nullptr : t.about.c_str(), t.strides.c_str(), t.arg,
                       t.flags, t.dtypeCode, t.dtypeBits, t.strideParam, t.fill,
                       t.bound.empty() ? nullptr : t.bound.c_str()});
  for (const PhaseSpec &p : spec.phases)
    phases.push_back({p.name.c_str(), p.items.c_str(), p.index.c_str(), nullptr, nullptr});
}

void InterfaceTables::fill(attnc_kernel_desc &desc, attnc_item_fn item,
                           attnc_device_fn device) {
  for (attnc_phase_desc &phase : phases) {
    phase.item = item;
    phase.device = device;
  }
  desc.num_symbols = int32_t(symbols.size());
  desc.num_tensors = int32_t(tensors.size());
  desc.num_phases = int32_t(phases.size());
  desc.num_args = spec.numArgs;
  desc.num_params = spec.numParams;
  desc.symbols = symbols.data();
  desc.tensors = tensors.data();
  desc.phases = phases.data();
}
