// A BigBird-style layout small enough to look at: 4-token blocks, one block of band on
// each side, the first block global, one random block per block row. Draw its weights with
//   build/bin/attnc-run --reference examples/bigbird_small.mlir --seq-q 32 -o /tmp/bb \
//       --weights-svg docs/weights-bigbird.svg
attn.kernel @bigbird_small {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.bigbird<block = 4, window = 1, global = 1, random = 1, seed = 42>,
                  outputs = [out]}
}
