// Packed sequences (FlexAttention's document masking): several 512-token documents share one
// sequence; each token attends causally within its own document only.
attn.kernel @document_mask {
  attn.attention {num_heads = 16, num_kv_heads = 4, head_dim = 128, dtype = bf16, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %len = arith.constant 512 : index
      %dq = arith.divui %q, %len : index
      %dk = arith.divui %kv, %len : index
      %keep = arith.cmpi eq, %dq, %dk : index
      attn.yield %keep : i1
    }
}
