// Prefill of a batch of prompts of different lengths, packed end to end as FlashAttention's
// flash_attn_varlen_func takes them: q and out are [total_q, 32, 128], k and v [total_kv, 8,
// 128], and int32 cu_seqlens_q / cu_seqlens_kv [batch + 1] say where each sequence starts. No
// padding is stored or computed; each sequence is attended alone (causal per sequence, aligned
// bottom-right, so a prompt that extends a cached prefix attends to all of it), and the runtime
// checks the offsets before any load.
attn.kernel @varlen_prefill {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse], varlen = cu_seqlens}
}
