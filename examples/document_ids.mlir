// Packed documents of any lengths (FlexAttention's document masking with a document-id
// tensor): document_id[b, t] numbers the document token t of sequence b belongs to, and each
// token attends causally within its own document only. The kernels read the ids of a tile's
// rows and columns to skip the tiles between documents (no seq x seq pass); make_inputs.py
// writes ids of random-length documents.
attn.kernel @document_ids {
  attn.attention {num_heads = 16, num_kv_heads = 4, head_dim = 128, dtype = bf16, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [out, lse],
                  inputs = [document_id: i32 [batch, seq_kv]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    }
}
