// Bahdanau's additive attention (Bahdanau, Cho and Bengio, 2014), as a sequence-to-sequence
// decoder attends over its encoder's states: score(s_t, h_i) = v^T tanh(W_s s_t + W_h h_i),
// with q = W_s s and k = W_h h already projected (d_a = head_dim) and a learned v per head,
// an input: examples/make_inputs.py additive writes one.
attn.kernel @additive {
  attn.attention {num_heads = 4, head_dim = 128, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [out, lse], inputs = [va: f32 [heads, head_dim]], additive = @va}
}
