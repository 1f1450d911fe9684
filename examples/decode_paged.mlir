// A batch of decode steps over a paged KV cache, as vLLM and FlashAttention lay it out: k and v
// are pages [num_pages, 16, 8, 128] shared by every sequence; int32 block_table [batch,
// max_pages] names each sequence's pages in key order and int32 kv_lens [batch] its length, so
// the sequences of one call have any lengths (0 included). Each sequence's 1 to 4 new queries
// are its last positions (the causal mask is bottom-right per sequence). The runtime checks
// every table entry and length before the kernel reads through them.
attn.kernel @decode_paged {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<bottom_right>, max_seq = [4, 131072], outputs = [out, lse],
                  num_splits = 0, kv_cache = paged<16>}
}
