// A split-KV decode kernel whose mask_mod reads document_id one past kv: at the last key it
// reads outside the input, which the reference and the kernel both report.
attn.kernel @decode_next_key {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse], num_splits = 0,
                  inputs = [document_id: i32 [batch, seq_kv]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %one = arith.constant 1 : index
      %next = arith.addi %kv, %one : index
      %dk = attn.load @document_id[%b, %next] : i32
      %zero = arith.constant 0 : i32
      %keep = arith.cmpi sge, %dk, %zero : i32
      attn.yield %keep : i1
    }
}
