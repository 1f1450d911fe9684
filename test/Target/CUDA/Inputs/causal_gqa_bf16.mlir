// bf16 grouped-query causal attention (bshd, log-sum-exp out): the CUDA tests' kernel.
attn.kernel @causal_gqa_bf16 {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 128, dtype = bf16,
                  layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
