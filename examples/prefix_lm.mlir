// Prefix-LM (T5, PaLI, UniLM) with a prefix length per sequence: every token sees the whole
// prefix (prefix[b] tokens) and is causal after it. The kernels read prefix[b] to keep the
// tiles inside the prefix or below the diagonal whole and skip the others above it.
attn.kernel @prefix_lm {
  attn.attention {num_heads = 8, head_dim = 64, dtype = bf16, layout = bhsd,
                  mask = #attn.full, outputs = [out, lse],
                  inputs = [prefix: i32 [batch]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %n32 = attn.load @prefix[%b] : i32
      %n = arith.index_cast %n32 : i32 to index
      %in = arith.cmpi slt, %kv, %n : index
      %causal = arith.cmpi sge, %q, %kv : index
      %keep = arith.ori %in, %causal : i1
      attn.yield %keep : i1
    }
}
