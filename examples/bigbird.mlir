// BigBird-style block-sparse attention: 64-token blocks, a band of one block on each side,
// the first block global, and two random blocks per query block row (seeded).
attn.kernel @bigbird {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.bigbird<block = 64, window = 1, global = 1, random = 2, seed = 42>,
                  outputs = [out]}
}
