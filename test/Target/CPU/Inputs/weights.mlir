// Causal GQA attention that also outputs its weights; max_seq bounds seq_q x seq_kv.
attn.kernel @causal_weights {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, max_seq = [128, 128],
                  outputs = [out, lse, weights]}
}
