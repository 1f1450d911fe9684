// Packed sequences (varlen = cu_seqlens) with document ids per sequence: document_id is
// [batch, seq_kv] with seq_kv the longest sequence's keys (what the offsets bind), and the
// mask_mod reads it at positions within each sequence.
attn.kernel @varlen_documents {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse],
                  varlen = cu_seqlens, inputs = [document_id: i32 [batch, seq_kv]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    }
}
