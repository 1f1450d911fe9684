// Multi-head self-attention from X: the packed QKV projection (nn.MultiheadAttention's
// in_proj_weight), the attention in the body, the output projection, in one kernel whose
// projections attnc generates. BERT-base's layer (embed_dim 768, 12 heads), and a causal
// decoder layer with grouped-query attention and ONNX Runtime's MatMul weight layout.
attn.kernel @bert_self_attention {
  attn.multihead_attention {embed_dim = 768, dtype = f32, weights = pytorch} {
    attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                    mask = #attn.full, outputs = [out]}
  }
}
attn.kernel @decoder_gqa {
  attn.multihead_attention {embed_dim = 512, dtype = bf16, weights = onnx} {
    attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}
