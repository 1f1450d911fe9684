// Every attn op and attribute survives print -> parse in the custom form, and the generic
// form parses back to the same IR (both printed through the custom printer for checking).
// RUN: attnc-opt %s | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC-LABEL: "attn.kernel"() <{sym_name = "dense"}>
// GENERIC: "attn.attention"() <{dtype = f32, head_dim = 64 : i64, layout = 0 : i32, mask = #attn.full, num_heads = 8 : i64, outputs = 1 : i32}>

// CHECK-LABEL: attn.kernel @dense {
// CHECK-NEXT: attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
// CHECK-NEXT: }
attn.kernel @dense {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out]}
}

// Parameters may come in any order; they print in the canonical one.
// CHECK-LABEL: attn.kernel @causal_gqa
// CHECK: attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = f16, layout = bshd, mask = #attn.causal<top_left>, scale = 1.250000e-01, outputs = [out, lse]}
attn.kernel @causal_gqa {
  attn.attention {outputs = [lse, out], mask = #attn.causal<top_left>, layout = bshd,
                  dtype = f16, head_dim = 128, num_kv_heads = 8, num_heads = 32, scale = 0.125}
}

// CHECK-LABEL: attn.kernel @decode_mqa
// CHECK: num_kv_heads = 1, head_dim = 80, dtype = bf16, layout = bhsd, mask = #attn.causal<bottom_right>
attn.kernel @decode_mqa {
  attn.attention {num_heads = 16, num_kv_heads = 1, head_dim = 80, dtype = bf16,
                  layout = bhsd, mask = #attn.causal<bottom_right>, outputs = [out]}
}

// CHECK-LABEL: attn.kernel @windows
// CHECK: mask = #attn.sliding_window<left = 255, right = 0>
attn.kernel @windows {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.sliding_window<left = 255, right = 0, align = top_left>,
                  outputs = [out]}
}

// CHECK-LABEL: attn.kernel @window_inf
// CHECK: mask = #attn.sliding_window<left = inf, right = 16, align = bottom_right>
attn.kernel @window_inf {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.sliding_window<left = inf, right = 16, align = bottom_right>,
                  outputs = [out]}
}

// CHECK-LABEL: attn.kernel @block_sparse
// CHECK: mask = #attn.block_sparse<block = [64, 32], layout = {{\[\[}}1, 0, 0], [1, 1, 0], [0, 0, 0]]>, max_seq = [192, 96], outputs = [out, lse, weights]
attn.kernel @block_sparse {
  attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                  mask = #attn.block_sparse<block = [64, 32],
                                            layout = [[1, 0, 0], [1, 1, 0], [0, 0, 0]]>,
                  max_seq = [192, 96], outputs = [weights, lse, out]}
}

// CHECK-LABEL: attn.kernel @longformer
// CHECK: mask = #attn.longformer<block = 64, window = 2, global = [0, 5]>
attn.kernel @longformer {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.longformer<block = 64, window = 2, global = [0, 5]>,
                  outputs = [out]}
}

// CHECK-LABEL: attn.kernel @longformer_band
// CHECK: mask = #attn.longformer<block = 32, window = 0, global = []>
attn.kernel @longformer_band {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                  mask = #attn.longformer<block = 32, window = 0, global = []>,
                  outputs = [out]}
}

// struct() syntax: BigBird's fields parse in any order.
// CHECK-LABEL: attn.kernel @bigbird
// CHECK: mask = #attn.bigbird<block = 64, window = 1, global = 2, random = 3, seed = 42>
attn.kernel @bigbird {
  attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.bigbird<seed = 42, block = 64, global = 2, random = 3, window = 1>,
                  outputs = [out]}
}

// CHECK-LABEL: attn.kernel @composed
// CHECK: mask = #attn.and<[#attn.causal<top_left>, #attn.or<[#attn.sliding_window<left = 63, right = 0>, #attn.longformer<block = 16, window = 0, global = [0]>]>]>
attn.kernel @composed {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.and<[#attn.causal<top_left>,
                                    #attn.or<[#attn.sliding_window<left = 63, right = 0>,
                                              #attn.longformer<block = 16, window = 0, global = [0]>]>]>,
                  outputs = [out]}
}

// CHECK-LABEL: attn.kernel @softcap_alibi
// CHECK: outputs = [out]} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[Q:.*]]: index, %[[KV:.*]]: index):
// CHECK: %[[T:.*]] = math.tanh
// CHECK: attn.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[MQ:.*]]: index, %[[MKV:.*]]: index):
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi ule, %[[MKV]], %[[MQ]] : index
// CHECK-NEXT: attn.yield %[[KEEP]] : i1
// CHECK-NEXT: } attributes {note = "discardable attributes survive"}
attn.kernel @softcap_alibi {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %capped = arith.mulf %t, %cap : f32
      %hi = arith.index_cast %h : index to i32
      %hf = arith.sitofp %hi : i32 to f32
      %qi = arith.index_cast %q : index to i32
      %ki = arith.index_cast %kv : index to i32
      %d = arith.subi %ki, %qi : i32
      %df = arith.sitofp %d : i32 to f32
      %bias = arith.mulf %hf, %df : f32
      %r = arith.addf %capped, %bias : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %keep = arith.cmpi ule, %kv, %q : index
      attn.yield %keep : i1
    } attributes {note = "discardable attributes survive"}
}

// CHECK-LABEL: attn.kernel @mask_mod_only attributes {owner = "roundtrip"}
// CHECK: outputs = [lse]} mask_mod {
attn.kernel @mask_mod_only attributes {owner = "roundtrip"} {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [lse]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %even = arith.remui %h, %c2 : index
      %keep = arith.cmpi eq, %even, %c0 : index
      attn.yield %keep : i1
    }
}

// attn.flash, the tiled form: the normalized parameters, the tile sizes and the regions.
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "tiled"}>
// GENERIC: "attn.flash"() <{block_kv = 32 : i64, block_q = 16 : i64, dtype = f32, head_dim = 80 : i64, layout = 1 : i32, mask = #attn.and<[#attn.sliding_window<left = 127, right = 0>, #attn.bigbird<block = 16, window = 1, global = 1, random = 2, seed = 7>]>, num_heads = 6 : i64, num_kv_heads = 3 : i64, outputs = 3 : i32, scale = 1.250000e-01 : f64}>
// CHECK-LABEL: attn.kernel @tiled {
// CHECK-NEXT: attn.flash {num_heads = 6, num_kv_heads = 3, head_dim = 80, dtype = f32, layout = bshd, mask = #attn.and<[#attn.sliding_window<left = 127, right = 0>, #attn.bigbird<block = 16, window = 1, global = 1, random = 2, seed = 7>]>, scale = 1.250000e-01, outputs = [out, lse], block_q = 16, block_kv = 32} score_mod {
// CHECK: math.tanh
// CHECK: attn.yield
attn.kernel @tiled {
  attn.flash {block_kv = 32, block_q = 16, num_heads = 6, num_kv_heads = 3, head_dim = 80,
              dtype = f32, layout = bshd, scale = 0.125, outputs = [out, lse],
              mask = #attn.and<[#attn.sliding_window<left = 127, right = 0>,
                                #attn.bigbird<block = 16, window = 1, global = 1, random = 2, seed = 7>]>}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
}

// A split-KV decode kernel: num_splits prints after outputs.
// CHECK-LABEL: attn.kernel @decode
// CHECK: attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16, layout = bhsd, mask = #attn.causal<bottom_right>, max_seq = [4, 65536], outputs = [out, lse], num_splits = 0}
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "decode"}>
// GENERIC: num_splits = 0 : i64
attn.kernel @decode {
  attn.attention {num_splits = 0, num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16,
                  layout = bhsd, mask = #attn.causal<bottom_right>, max_seq = [4, 65536],
                  outputs = [out, lse]}
}

// A decode kernel over a paged KV cache, and one with per-sequence lengths:
// kv_cache prints after num_splits, as page_size (0: lengths).
// CHECK-LABEL: attn.kernel @decode_paged
// CHECK: outputs = [out, lse], num_splits = 4, kv_cache = paged<16>}
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "decode_paged"}>
// GENERIC: page_size = 16 : i64
attn.kernel @decode_paged {
  attn.attention {kv_cache = paged<16>, num_heads = 32, num_kv_heads = 8, head_dim = 128,
                  dtype = f32, layout = bhsd, mask = #attn.causal<bottom_right>,
                  outputs = [out, lse], num_splits = 4}
}
// Head-major pages ([num_pages, kv_heads, N, head_dim]): `, hnd` inside paged<>; nhd (the
// default, token-major) prints as paged<N>.
// CHECK-LABEL: attn.kernel @decode_paged_hnd
// CHECK: num_splits = 0, kv_cache = paged<32, hnd>}
// CHECK-LABEL: attn.kernel @decode_paged_nhd
// CHECK: num_splits = 0, kv_cache = paged<32>}
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "decode_paged_hnd"}>
// GENERIC: page_size = 32 : i64, pages_head_major
attn.kernel @decode_paged_hnd {
  attn.attention {num_heads = 8, head_dim = 64, dtype = bf16, layout = bhsd, mask = #attn.full,
                  outputs = [out], num_splits = 0, kv_cache = paged<32, hnd>}
}
attn.kernel @decode_paged_nhd {
  attn.attention {num_heads = 8, head_dim = 64, dtype = bf16, layout = bhsd, mask = #attn.full,
                  outputs = [out], num_splits = 0, kv_cache = paged<32, nhd>}
}
// CHECK-LABEL: attn.kernel @decode_lengths
// CHECK: outputs = [out], num_splits = 0, kv_cache = lengths}
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "decode_lengths"}>
// GENERIC: page_size = 0 : i64
attn.kernel @decode_lengths {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [out], num_splits = 0, kv_cache = lengths}
}

// Packed sequences using the first kv_lens[b] keys of their spans (FlashAttention's seqused_k).
// CHECK-LABEL: attn.kernel @varlen_lengths
// CHECK: outputs = [out], kv_cache = lengths, varlen = cu_seqlens}
attn.kernel @varlen_lengths {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [out], kv_cache = lengths, varlen = cu_seqlens}
}

// Packed variable-length sequences: varlen prints last, a unit attribute.
// CHECK-LABEL: attn.kernel @varlen
// CHECK: outputs = [out, lse], varlen = cu_seqlens}
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "varlen"}>
// GENERIC: varlen
attn.kernel @varlen {
  attn.attention {varlen = cu_seqlens, num_heads = 8, head_dim = 64, dtype = bf16, layout = bshd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}

// Inputs the mods read: dims as the spec writes them, attn.load in a body.
// CHECK-LABEL: attn.kernel @mod_inputs
// CHECK: inputs = [document_id: i32 [batch, seq_kv], bias: f32 [heads, 2 * seq_kv - 1], slopes: f32 [heads], prefix: i32 [batch], table: f32 [seq_q + 3]]}
// CHECK: %{{.*}} = attn.load @document_id[%{{.*}}, %{{.*}}] : i32
// GENERIC-LABEL: "attn.kernel"() <{sym_name = "mod_inputs"}>
// GENERIC: inputs = [#attn.input<"document_id", i32, ["batch", "seq_kv"]>, #attn.input<"bias", f32, ["heads", "2*seq_kv-1"]>
// GENERIC: "attn.load"(%{{.*}}, %{{.*}}) <{input = @document_id}> : (index, index) -> i32
attn.kernel @mod_inputs {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out],
                  inputs = [document_id: i32 [batch, seq_kv], bias: f32 [heads, 2*seq_kv-1],
                            slopes: f32 [heads], prefix: i32 [batch], table: f32 [1 * seq_q + 3]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %same = arith.cmpi eq, %dq, %dk : i32
      attn.yield %same : i1
    }
}
