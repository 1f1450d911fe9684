// Grouped-query causal attention in bf16 for NVIDIA tensor cores (attnc --target=cuda-sm80):
// 32 query heads share 8 key/value heads, head_dim 128, bshd (PyTorch's [batch, seq, heads,
// dim]), the mask aligned bottom-right so new queries see the whole KV cache; also returns the
// log-sum-exp per row. Tensors are kDLCUDA device memory.
attn.kernel @cuda_causal_gqa_bf16 {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16,
                  layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
