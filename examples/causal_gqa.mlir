// Grouped-query causal attention as used by Llama-style decoders: 32 query heads share
// 8 key/value heads, the mask is aligned bottom-right so a chunk of new queries sees the
// whole KV cache before it, and the kernel also returns the log-sum-exp per row.
attn.kernel @causal_gqa {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = f32,
                  layout = bhsd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
