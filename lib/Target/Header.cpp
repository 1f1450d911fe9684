//===- Header.cpp - the C header of a compiled spec -----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Plain C, one declaration per kernel, each with a comment giving the tensor
// shapes it expects, so the header is the kernel's documentation.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/Compile.h"
#include "attnc/Dialect/Attn/AttnOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::attn;

/// DLPack's name of a spec's dtype (the runtime's messages use them too).
static StringRef dlpackName(Type dtype) {
  return dtype.isF32() ? "float32" : dtype.isF16() ? "float16" : "bfloat16";
}

/// A backward kernel (outputs = [dq, dk, dv]): the forward's tensors in,
/// the gradients out.
/// The mods' inputs' lines of a kernel's comment; returns their parameters
/// ("const DLTensor *bias, "), for a backward kernel followed by the f32
/// ones' gradients.
static std::string describeInputs(AttentionSpecOpInterface op, llvm::raw_ostream &os) {
  std::string params, gradients;
  ArrayAttr inputs = op.getInputsAttr();
  if (!inputs)
    return params;
  bool backward = op.hasOutput(OutputKind::dq);
  for (auto input : inputs.getAsRange<ModInputAttr>()) {
    std::string dims;
    for (StringRef d : input.getDims().getAsValueRange<StringAttr>())
      dims += (dims.empty() ? "" : ", ") + d.str();
    bool table = input.getElementType().isF32();
    StringRef name = input.getName().getValue();
    os << " *   " << name << ": " << (table ? "float32" : "int32") << " [" << dims << "], ";
    if (op.getAdditiveAttr() && op.getAdditiveAttr().getValue() == name)
      os << "the additive scores' v (any strides)\n";
    else
      os << "read by the mods (any strides; an index outside it fails the call with "
            "ATTNC_ERR_INDEX)\n";
    params += "const DLTensor *" + name.str() + ", ";
    if (backward && table) {
      os << " *   d_" << name << ": float32 [" << dims << "], written: the loss's gradient on "
         << name << " (bit-identical for any thread count)\n";
      gradients += "DLTensor *d_" + name.str() + ", ";
    }
  }
  return params + gradients;
}

static void describeBackwardKernel(KernelOp kernel, AttentionSpecOpInterface op,
                                   llvm::raw_ostream &os) {
  std::string dim = std::to_string(op.getDim());
  auto shape = [&](int64_t heads, StringRef seq) {
    std::string h = std::to_string(heads);
    return op.getLayout() == Layout::bhsd ? "[batch, " + h + ", " + seq.str() + ", " + dim + "]"
                                          : "[batch, " + seq.str() + ", " + h + ", " + dim + "]";
  };
  StringRef dlName = dlpackName(op.getDtype());
  std::string mask;
  llvm::raw_string_ostream(mask) << op.getMask();
  os << "/* " << kernel.getSymName() << ": the backward of " << op.getHeads() << " heads ("
     << op.getKvHeads() << " kv), head_dim " << dim << ", " << stringifyLayout(op.getLayout())
     << ", scale " << op.getScaleOrDefault() << "\n *   mask " << mask
     << (op.getScoreMod().empty() ? "" : ", score_mod")
     << (op.getMaskMod().empty() ? "" : ", mask_mod") << "\n"
     << " *   q, out, d_out, dq: " << dlName << " " << shape(op.getHeads(), "seq_q") << "\n"
     << " *   k, v, dk, dv:      " << dlName << " " << shape(op.getKvHeads(), "seq_kv") << "\n"
     << " *   lse: float32 [batch, " << op.getHeads() << ", seq_q], the forward's\n"
     << " *   d_lse: float32 [batch, " << op.getHeads()
     << ", seq_q], the loss's gradient on lse, or NULL for none\n"
     << " *   out and lse from the forward kernel of the same spec (outputs = [out, lse]);\n"
     << " *   d_out the loss's gradient on out; writes dq, dk, dv (bit-identical for any\n"
     << " *   thread count); each call allocates kv_chunks x dq in float32 as working memory\n";
  std::string inputParams = describeInputs(op, os);
  if (inputParams.find("d_") != std::string::npos)
    os << " *   working memory: also batch x kv_heads x kv_chunks float32 copies of each float32 input\n";
  os << " * Returns 0, or an attnc_status; attnc_last_error() says why. */\n"
     << "int " << kernel.getSymName()
     << "(const DLTensor *q, const DLTensor *k, const DLTensor *v,\n"
     << "    const DLTensor *out, const DLTensor *lse, const DLTensor *d_out,\n"
     << "    const DLTensor *d_lse, DLTensor *dq, DLTensor *dk, DLTensor *dv, " << inputParams
     << "const attnc_options *opt);\n\n";
}

/// A linear attention kernel (attn.linear_attention).
static void describeLinearKernel(KernelOp kernel, LinearAttentionOp op, llvm::raw_ostream &os) {
  std::string seqQ = op.getCausal() ? "seq" : "seq_q", seqKv = op.getCausal() ? "seq" : "seq_kv";
  auto shape = [&](int64_t heads, StringRef seq, int64_t dim) {
    std::string h = std::to_string(heads), d = std::to_string(dim);
    return op.getLayout() == Layout::bhsd ? "[batch, " + h + ", " + seq.str() + ", " + d + "]"
                                          : "[batch, " + seq.str() + ", " + h + ", " + d + "]";
  };
  int64_t dk = op.getDim(), dv = op.getValueDimOrDefault();
  StringRef dlName = dlpackName(op.getDtype());
  os << "/* " << kernel.getSymName() << ": linear attention, " << op.getHeads() << " heads ("
     << op.getKvHeads() << " kv), head_dim " << dk << ", value_dim " << dv << ", "
     << stringifyLayout(op.getLayout())
     << "\n *   phi = " << stringifyFeatureMap(op.getFeatureMap())
     << ", scale " << op.getScaleOrDefault() << (op.getCausal() ? ", causal (chunks of " : "")
     << (op.getCausal() ? std::to_string(op.getChunkOrDefault()) + " rows)" : "");
  if (op.getNormalize())
    os << ", normalized: out_i = Q_i S / (Q_i . z + " << op.getEpsOrDefault() << ")\n";
  else
    os << ", unnormalized: out_i = Q_i S\n";
  os << " *   q:   " << dlName << " " << shape(op.getHeads(), seqQ, dk) << "\n"
     << " *   k:   " << dlName << " " << shape(op.getKvHeads(), seqKv, dk) << "\n"
     << " *   v:   " << dlName << " " << shape(op.getKvHeads(), seqKv, dv) << "\n"
     << " *   out: " << dlName << " " << shape(op.getHeads(), seqQ, dv) << "\n";
  std::string state = "[batch, " + std::to_string(op.getKvHeads()) + ", " + std::to_string(dk);
  if (op.getCarryState())
    os << " *   initial_state: float32 " << state << ", " << dv << "], initial_norm: float32 "
       << state << "]: the state to continue from, or NULL for 0\n"
       << " *   final_state, final_norm: the same shapes, written: the state after the last "
          "row;\n *   pass them as the next call's initial ones (a decode step: seq = 1)\n";
  else if (!op.getCausal())
    os << " *   each call allocates the state, batch x " << op.getKvHeads() << " x " << dk
       << " x " << dv << " float32, as working memory\n";
  os << " * Returns 0, or an attnc_status; attnc_last_error() says why. */\n"
     << "int " << kernel.getSymName()
     << "(const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out,\n    "
     << (op.getCarryState() ? "const DLTensor *initial_state, const DLTensor *initial_norm,\n"
                              "    DLTensor *final_state, DLTensor *final_norm, "
                            : "")
     << "const attnc_options *opt);\n\n";
}

/// A multi-head attention kernel (attn.multihead_attention).
static void describeMultiHeadKernel(KernelOp kernel, MultiHeadAttentionOp op,
                                    llvm::raw_ostream &os) {
  AttentionSpecOpInterface attention = op.getAttention();
  int64_t e = op.getEmbedSize(), h = attention.getHeads(), g = attention.getKvHeads();
  int64_t d = attention.getDim(), qkv = (h + 2 * g) * d;
  auto matrix = [&](int64_t out, int64_t in) {
    return op.isOnnx() ? "[" + std::to_string(in) + ", " + std::to_string(out) + "]"
                       : "[" + std::to_string(out) + ", " + std::to_string(in) + "]";
  };
  StringRef dlName = dlpackName(op.getDtype());
  std::string mask;
  llvm::raw_string_ostream(mask) << attention.getMask();
  os << "/* " << kernel.getSymName() << ": multi-head self-attention, embed_dim " << e << ", "
     << h << " heads (" << g << " kv), head_dim " << d << ", scale "
     << attention.getScaleOrDefault() << "\n *   mask " << mask
     << (attention.getScoreMod().empty() ? "" : ", score_mod")
     << (attention.getMaskMod().empty() ? "" : ", mask_mod") << "; "
     << (op.isOnnx() ? "MatMul weights [in, out] (y = x W, ONNX Runtime's)"
                     : "nn.Linear weights [out, in] (y = x W^T, nn.MultiheadAttention's)")
     << "\n *   x, out: " << dlName << " [batch, seq, " << e << "]\n"
     << " *   in_proj_weight: " << dlName << " " << matrix(qkv, e)
     << ", q's heads, then k's, then v's; in_proj_bias: [" << qkv << "] or NULL\n"
     << " *   out_proj_weight: " << dlName << " " << matrix(e, h * d) << "; out_proj_bias: ["
     << e << "] or NULL\n"
     << (op.hasKeyLengths() ? " *   key_lengths: int32 [batch], the keys each sequence attends "
                              "from its first (0 to seq; a row with none is 0)\n"
                            : "")
     << " *   each call allocates q, k, v and the attention's output in float32, batch x seq x "
     << (2 * h + 2 * g) * d << " values, as working memory\n"
     << " * Returns 0, or an attnc_status; attnc_last_error() says why. */\n"
     << "int " << kernel.getSymName()
     << "(const DLTensor *x, const DLTensor *in_proj_weight, const DLTensor *in_proj_bias,\n"
        "    const DLTensor *out_proj_weight, const DLTensor *out_proj_bias, DLTensor *out,\n"
        "    "
     << (op.hasKeyLengths() ? "const DLTensor *key_lengths, " : "")
     << "const attnc_options *opt);\n\n";
}

/// A projection kernel (attn.projection).
static void describeProjectionKernel(KernelOp kernel, ProjectionOp op, llvm::raw_ostream &os) {
  int64_t in = op.getIn(), out = op.getOut();
  StringRef dlName = dlpackName(op.getDtype());
  os << "/* " << kernel.getSymName() << ": projection, " << in << " -> " << out << " features, "
     << (op.isOnnx() ? "MatMul weight [in, out] (y = x W + bias)"
                     : "nn.Linear weight [out, in] (y = x W^T + bias)")
     << "\n *   x: " << dlName << " [batch, seq, " << in << "]; y: " << dlName << " [batch, seq, "
     << out << "] (strided views with a unit inner stride)\n"
     << " *   weight: " << dlName << " ["
     << (op.isOnnx() ? std::to_string(in) + ", " + std::to_string(out)
                     : std::to_string(out) + ", " + std::to_string(in))
     << "]; bias: [" << out << "] or NULL\n"
     << " * Returns 0, or an attnc_status; attnc_last_error() says why. */\n"
     << "int " << kernel.getSymName()
     << "(const DLTensor *x, const DLTensor *weight, const DLTensor *bias, DLTensor *y,\n"
        "    const attnc_options *opt);\n\n";
}

static void describeKernel(KernelOp kernel, llvm::raw_ostream &os) {
  if (auto linear = dyn_cast_or_null<LinearAttentionOp>(kernel.getCompute().getOperation()))
    return describeLinearKernel(kernel, linear, os);
  if (auto mha = dyn_cast_or_null<MultiHeadAttentionOp>(kernel.getCompute().getOperation()))
    return describeMultiHeadKernel(kernel, mha, os);
  if (auto projection = dyn_cast_or_null<ProjectionOp>(kernel.getCompute().getOperation()))
    return describeProjectionKernel(kernel, projection, os);
  AttentionSpecOpInterface op = kernel.getSpec(); // attn.attention or attn.flash
  if (op.hasOutput(OutputKind::dq))
    return describeBackwardKernel(kernel, op, os);
  bool bhsd = op.getLayout() == Layout::bhsd;
  bool varlen = op.getVarlen();
  // Pages of `page` keys: token-major [num_pages, page, kv_heads, dim], or head-major.
  auto pagesShape = [](AttentionSpecOpInterface op, int64_t page) {
    std::string p = std::to_string(page), kv = std::to_string(op.getKvHeads());
    std::string inner = op.getPagesHeadMajor() ? kv + ", " + p : p + ", " + kv;
    return "[num_pages, " + inner + ", " + std::to_string(op.getDim()) + "] (pages of " + p +
           " keys" + (op.getPagesHeadMajor() ? ", head-major)" : ")");
  };
  auto shape = [&](StringRef heads, StringRef seq, StringRef total) {
    if (varlen) // packed: total_q or total_kv rows
      return ("[" + total + ", " + heads + ", " + llvm::Twine(op.getDim()) +
              "] (packed sequences)")
          .str();
    return bhsd ? ("[batch, " + heads + ", " + seq + ", " + llvm::Twine(op.getDim()) + "]").str()
                : ("[batch, " + seq + ", " + heads + ", " + llvm::Twine(op.getDim()) + "]").str();
  };
  std::string heads = std::to_string(op.getHeads()), kv = std::to_string(op.getKvHeads());
  std::optional<uint64_t> pageSize = op.getPageSize();
  int64_t page = pageSize ? int64_t(*pageSize) : -1;
  Type dtype = op.getDtype();
  StringRef dlName = dlpackName(dtype);
  std::string dtypeText;
  llvm::raw_string_ostream(dtypeText) << dtype;
  std::string mask;
  llvm::raw_string_ostream maskOs(mask);
  maskOs << op.getMask();
  os << "/* " << kernel.getSymName() << ": " << op.getHeads() << " heads ("
     << op.getKvHeads() << " kv), head_dim " << op.getDim() << ", " << dtypeText << ", "
     << stringifyLayout(op.getLayout()) << ", scale "
     << op.getScaleOrDefault() << "\n *   mask " << mask
     << (op.getScoreMod().empty() ? "" : ", score_mod")
     << (op.getMaskMod().empty() ? "" : ", mask_mod") << "\n";
  if (FlatSymbolRefAttr v = op.getAdditiveAttr()) {
    bool perHead = false;
    for (auto input : op.getInputsAttr().getAsRange<ModInputAttr>())
      perHead |= input.getName() == v.getAttr() && input.getDims().size() == 2;
    os << " *   additive scores: scale * sum_d " << v.getValue() << (perHead ? "[h, d]" : "[d]")
       << " tanh(q_d + k_d) (Bahdanau's)\n";
  }
  os << " *   q, out: " << dlName << " " << shape(heads, "seq_q", "total_q")
     << (op.hasOutput(OutputKind::out) ? "" : " (out is written even though the spec asks for lse only)")
     << "\n"
     << " *   k, v:   " << dlName << " "
     << (page > 0 ? pagesShape(op, page) : shape(kv, "seq_kv", "total_kv"))
     << "\n"
     << " *   lse:    float32 " << (varlen ? "[" + heads + ", total_q]" : "[batch, " + heads + ", seq_q]")
     << (op.hasOutput(OutputKind::lse) ? " (required)" : " (not written; pass NULL)")
     << "\n";
  bool weights = op.hasOutput(OutputKind::weights);
  if (weights)
    os << " *   weights: " << dlName << " [batch, " << heads
       << ", seq_q, seq_kv] (required; 0 where masked)\n";
  if (std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq())
    os << " *   seq_q <= " << (*maxSeq)[0]
       << (page > 0 ? "" : ", seq_kv <= " + std::to_string((*maxSeq)[1])) << "\n";
  if (std::optional<uint64_t> splits = op.getNumSplits())
    os << " *   split-KV decode, num_splits = " << *splits << (*splits ? "" : " (auto)")
       << ": seq_q <= " << decodeMaxSeqQ(op.getMaxSeq())
       << "; each call allocates splits x out in float32 as working memory\n";
  if (page >= 0 && !varlen)
    os << " *   kv_lens: int32 [batch], each sequence's KV length (<= "
       << (page > 0 ? "max_pages * page_size" : "seq_kv")
       << "); its queries are its last seq_q positions\n";
  if (page > 0)
    os << " *   block_table: int32 [batch, max_pages], the pages of each sequence in key "
          "order (every entry in [0, num_pages))\n";
  if (varlen)
    os << " *   cu_seqlens_q, cu_seqlens_kv: int32 [batch + 1], where each sequence starts "
          "in q / k and v, then the end (non-decreasing); a sequence's positions (masks, "
          "mods) count from its start\n";
  if (varlen && page == 0)
    os << " *   kv_lens: int32 [batch], the keys each sequence uses from the start of its rows "
          "in k and v (FlashAttention's seqused_k; each at most its length in cu_seqlens_kv)\n";
  std::string inputParams = describeInputs(op, os);
  os << " * Returns 0, or an attnc_status; attnc_last_error() says why. */\n"
     << "int " << kernel.getSymName()
     << "(const DLTensor *q, const DLTensor *k, const DLTensor *v,\n"
     << "    DLTensor *out, DLTensor *lse, " << (weights ? "DLTensor *weights, " : "")
     << (page >= 0 && !varlen ? "const DLTensor *kv_lens, " : "")
     << (page > 0 ? "const DLTensor *block_table, " : "")
     << (varlen ? "const DLTensor *cu_seqlens_q, const DLTensor *cu_seqlens_kv,\n    " : "")
     << (varlen && page == 0 ? "const DLTensor *kv_lens, " : "")
     << inputParams
     << "const attnc_options *opt);\n\n";
}

void attnc::writeHeader(ModuleOp normalized, StringRef specPath,
                        llvm::raw_ostream &os) {
  std::string guard = "ATTNC_KERNELS_" +
                      llvm::sys::path::stem(specPath).upper() + "_H";
  for (char &c : guard)
    if (!llvm::isAlnum(c))
      c = '_';
  os << "/* Generated by attnc from " << llvm::sys::path::filename(specPath)
     << "; do not edit.\n * Link with attnc's runtime (Attnc::runtime in CMake), "
        "-lm and -lpthread. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <attnc/Runtime/attnc_runtime.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (KernelOp kernel : normalized.getOps<KernelOp>())
    describeKernel(kernel, os);
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
}
