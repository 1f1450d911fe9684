// A mask_mod that reads document_id one past q: at the last query position it reads outside
// the input, which the reference and the kernel both report.
attn.kernel @next_document {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse],
                  inputs = [document_id: i32 [batch, seq_kv]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %one = arith.constant 1 : index
      %next = arith.addi %q, %one : index
      %dq = attn.load @document_id[%b, %next] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    }
}
