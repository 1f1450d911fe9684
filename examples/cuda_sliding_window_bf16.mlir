// Mistral-style sliding-window attention in bf16 for NVIDIA tensor cores
// (attnc --target=cuda-sm80): each query sees itself and the 4095 keys before it, so a query
// tile visits at most 65 of the KV tiles, whatever the sequence length.
attn.kernel @cuda_sliding_window_bf16 {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16,
                  layout = bshd, mask = #attn.sliding_window<left = 4095, right = 0>,
                  outputs = [out]}
}
