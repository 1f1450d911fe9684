//===- LinearInterface.cpp - The linear attention family's interface ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Interface/KernelInterface.h"

#include "TensorSpecs.h"

using namespace attnc;

namespace {

/// q, k, v or out: [batch, heads, seq, dim] in the layout's order, strides
/// (batch, heads, seq) passed from `param`, innermost stride 1.
TensorSpec rowTensor(const LinearFacts &f, const char *name, const char *heads,
                     const char *seq, const char *dim, int32_t arg, int32_t flags,
                     int32_t param) {
  std::string b = "batch", h = heads, s = seq;
  bool bshd = f.layout == 1;
  std::string dims = b + "," + (bshd ? s + "," + h : h + "," + s) + "," + dim;
  std::string legend = (bshd ? "bshd: " : "bhsd: ") + legendOf(dims);
  return tensorSpec(name, dims.c_str(), legend.c_str(), (b + "," + h + "," + s).c_str(), arg,
                    flags | ATTNC_TENSOR_UNIT_INNER, f.dtypeCode, f.dtypeBits, param);
}

/// A state [batch, kv_heads, head_dim, value_dim] (`norm`: a normalizer
/// [batch, kv_heads, head_dim]), f32.
TensorSpec stateTensor(const char *name, bool norm, int32_t arg, int32_t flags,
                       int32_t param) {
  const char *dims = norm ? "batch,kv_heads,head_dim" : "batch,kv_heads,head_dim,value_dim";
  TensorSpec t = tensorSpec(name, dims, legendOf(dims).c_str(),
                            norm ? "batch,kv_heads" : "batch,kv_heads,head_dim", arg,
                            flags | ATTNC_TENSOR_UNIT_INNER, kDLFloat, 32, param);
  t.about = "linear attention's state is float32 whatever the kernel's dtype";
  return t;
}

} // namespace

KernelInterface attnc::linearInterface(const LinearFacts &f) {
  KernelInterface in;
  in.numArgs = f.carry ? 8 : 4;
  in.numParams = ATTNC_P_LINEAR_COUNT;
  // Causal: one length for q, k and v (row i attends to keys 0..i). Not a
  // reduced size: a carried state is copied through a call of no rows.
  const char *seqQ = f.causal ? "seq" : "seq_q", *seqKv = f.causal ? "seq" : "seq_kv";
  in.symbols = {{"batch"}, {"heads", f.heads}, {"kv_heads", f.kvHeads}};
  if (f.causal) {
    in.symbols.push_back({"seq", -1, 0, ATTNC_P_SEQ_Q});
  } else {
    in.symbols.push_back({"seq_q", -1, 0, ATTNC_P_SEQ_Q});
    // No keys: S = 0, so every row is 0 (the outputs' zero fill).
    in.symbols.push_back({"seq_kv", -1, 0, ATTNC_P_SEQ_KV, ATTNC_SYMBOL_REDUCED});
  }
  in.symbols.push_back({"head_dim", f.headDim});
  in.symbols.push_back({"value_dim", f.valueDim});
  in.tensors = {
      rowTensor(f, "q", "heads", seqQ, "head_dim", 0, 0, ATTNC_P_Q_STRIDES),
      rowTensor(f, "k", "kv_heads", seqKv, "head_dim", 1, 0, ATTNC_P_K_STRIDES),
      rowTensor(f, "v", "kv_heads", seqKv, "value_dim", 2, 0, ATTNC_P_V_STRIDES),
      rowTensor(f, "out", "heads", seqQ, "value_dim", 3, ATTNC_TENSOR_OUTPUT,
                ATTNC_P_OUT_STRIDES)};
  if (f.carry) {
    in.tensors.push_back(stateTensor("initial_state", false, 4, ATTNC_TENSOR_OPTIONAL,
                                     ATTNC_P_INITIAL_STATE_STRIDES));
    in.tensors.push_back(stateTensor("initial_norm", true, 5, ATTNC_TENSOR_OPTIONAL,
                                     ATTNC_P_INITIAL_NORM_STRIDES));
    in.tensors.push_back(stateTensor("final_state", false, 6, ATTNC_TENSOR_OUTPUT,
                                     ATTNC_P_FINAL_STATE_STRIDES));
    in.tensors.push_back(stateTensor("final_norm", true, 7, ATTNC_TENSOR_OUTPUT,
                                     ATTNC_P_FINAL_NORM_STRIDES));
  } else if (!f.causal) { // the state phase's result, which the attention phase reads
    in.tensors.push_back(
        stateTensor("kv_state", false, 4, ATTNC_TENSOR_SCRATCH, ATTNC_P_KV_STATE_STRIDES));
    in.tensors.push_back(
        stateTensor("kv_norm", true, 5, ATTNC_TENSOR_SCRATCH, ATTNC_P_KV_NORM_STRIDES));
  }
  if (f.causal) {
    in.phases = {{"attention", "batch,kv_heads", "b,g"}};
    return in;
  }
  in.symbols.push_back({"block_q", f.blockQ});
  in.phases = {{"state", "batch,kv_heads", "b,g"},
               {"attention", "batch,heads,seq_q/block_q", "b,h,q_tile"}};
  return in;
}
