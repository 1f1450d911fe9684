// Multi-head attention kernels (multihead-numerics.test): nn.Linear weights with causal GQA,
// embed_dim 96 and head_dim 24 (neither a multiple of 64); MatMul (ONNX) weights in bf16; f16
// with a sliding window and a soft-capping score_mod, heads x head_dim != embed_dim; MatMul
// weights in f32 with GQA (NumPy's check of both weight orders).
attn.kernel @pytorch_gqa {
  attn.multihead_attention {embed_dim = 96, dtype = f32, weights = pytorch} {
    attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 24, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}
attn.kernel @onnx_bf16 {
  attn.multihead_attention {embed_dim = 128, dtype = bf16, weights = onnx} {
    attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full,
                    outputs = [out]}
  }
}
attn.kernel @window_f16 {
  attn.multihead_attention {embed_dim = 80, dtype = f16, weights = pytorch} {
    attn.attention {num_heads = 3, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.sliding_window<left = 20, right = 5>, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %cap = arith.constant 5.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  }
}
attn.kernel @onnx_f32 {
  attn.multihead_attention {embed_dim = 128, dtype = f32, weights = onnx} {
    attn.attention {num_heads = 4, num_kv_heads = 1, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.full, outputs = [out]}
  }
}
// Key padding (key_padding = lengths): causal GQA in f32 (NumPy's check with lengths), and a
// bf16 sliding window over the lengths.
attn.kernel @padded_f32 {
  attn.multihead_attention {embed_dim = 96, dtype = f32, weights = pytorch,
                            key_padding = lengths} {
    attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 24, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}
attn.kernel @padded_bf16 {
  attn.multihead_attention {embed_dim = 128, dtype = bf16, weights = onnx, key_padding = lengths} {
    attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
                    mask = #attn.sliding_window<left = 40, right = 40>, outputs = [out]}
  }
}
