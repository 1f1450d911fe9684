// attn-normalize: every canonical form, and idempotence (a second run changes nothing).
// RUN: attnc-opt %s --split-input-file --attn-normalize | FileCheck %s
// RUN: attnc-opt %s --split-input-file --attn-normalize | attnc-opt --split-input-file --attn-normalize | FileCheck %s

// Defaults: num_kv_heads = num_heads, scale = 1/sqrt(head_dim).
// CHECK-LABEL: @defaults
// CHECK: {num_heads = 8, num_kv_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 1.250000e-01, outputs = [out]}
attn.kernel @defaults {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// CHECK-LABEL: @default_scale_d80
// CHECK: scale = 0.11180339887498948
attn.kernel @default_scale_d80 {
  attn.attention {num_heads = 8, head_dim = 80, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// Given values are kept.
// CHECK-LABEL: @explicit
// CHECK: num_heads = 8, num_kv_heads = 2, head_dim = 64, {{.*}} scale = 5.000000e-01
attn.kernel @explicit {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.5, outputs = [out]}
}

// -----

// CHECK-LABEL: @causal_top_left
// CHECK: mask = #attn.sliding_window<left = inf, right = 0>,
attn.kernel @causal_top_left {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, outputs = [out]}
}

// -----

// CHECK-LABEL: @causal_bottom_right
// CHECK: mask = #attn.sliding_window<left = inf, right = 0, align = bottom_right>,
attn.kernel @causal_bottom_right {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<bottom_right>, outputs = [out]}
}

// -----

// CHECK-LABEL: @unbounded_window
// CHECK: mask = #attn.full,
attn.kernel @unbounded_window {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = inf, right = inf, align = bottom_right>, outputs = [out]}
}

// -----

// Finite windows stay windows when the lengths are unbounded.
// CHECK-LABEL: @finite_window
// CHECK: mask = #attn.sliding_window<left = 100000, right = 100000>,
attn.kernel @finite_window {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 100000, right = 100000>, outputs = [out]}
}

// -----

// top_left with max_seq = [Q, KV]: covering everything needs left >= Q - 1, right >= KV - 1.
// CHECK-LABEL: @covering_top_left
// CHECK: mask = #attn.full,
attn.kernel @covering_top_left {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 127, right = 255>, max_seq = [128, 256], outputs = [out]}
}

// -----

// CHECK-LABEL: @almost_covering_top_left
// CHECK: mask = #attn.sliding_window<left = 127, right = 254>,
attn.kernel @almost_covering_top_left {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 127, right = 254>, max_seq = [128, 256], outputs = [out]}
}

// -----

// bottom_right swaps the roles: left >= KV - 1, right >= Q - 1.
// CHECK-LABEL: @covering_bottom_right
// CHECK: mask = #attn.full,
attn.kernel @covering_bottom_right {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 255, right = 127, align = bottom_right>, max_seq = [128, 256], outputs = [out]}
}

// -----

// CHECK-LABEL: @almost_covering_bottom_right
// CHECK: mask = #attn.sliding_window<left = 254, right = 127, align = bottom_right>,
attn.kernel @almost_covering_bottom_right {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = 254, right = 127, align = bottom_right>, max_seq = [128, 256], outputs = [out]}
}

// -----

// Causal never covers everything once seq_kv > 1, so it stays a window under max_seq.
// CHECK-LABEL: @causal_bounded
// CHECK: mask = #attn.sliding_window<left = inf, right = 0>,
attn.kernel @causal_bounded {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, max_seq = [64, 64], outputs = [out]}
}

// -----

// Nested ands flatten into one.
// CHECK-LABEL: @and_flatten
// CHECK: mask = #attn.and<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.sliding_window<left = inf, right = 0>, #attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>]>,
attn.kernel @and_flatten {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.and<[#attn.causal<top_left>, #attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>]>]>, outputs = [out]}
}

// -----

// full is the identity of and; one operand left means no and at all.
// CHECK-LABEL: @and_drops_full
// CHECK: mask = #attn.longformer<block = 64, window = 1, global = [0]>,
attn.kernel @and_drops_full {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.full, #attn.longformer<block = 64, window = 1, global = [0]>, #attn.full]>, outputs = [out]}
}

// -----

// CHECK-LABEL: @and_of_fulls
// CHECK: mask = #attn.full,
attn.kernel @and_of_fulls {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.full, #attn.sliding_window<left = inf, right = inf>]>, outputs = [out]}
}

// -----

// Windows of one alignment intersect into one window; other alignments stay apart.
// CHECK-LABEL: @and_merges_windows
// CHECK: mask = #attn.and<[#attn.sliding_window<left = 127, right = 0>, #attn.sliding_window<left = 511, right = 8, align = bottom_right>]>,
attn.kernel @and_merges_windows {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.causal<top_left>, #attn.sliding_window<left = 511, right = 8, align = bottom_right>, #attn.sliding_window<left = 127, right = 4>]>, outputs = [out]}
}

// -----

// Duplicates go.
// CHECK-LABEL: @and_dedupe
// CHECK: mask = #attn.and<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>]>,
attn.kernel @and_dedupe {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>, #attn.longformer<block = 64, window = 1, global = [0]>]>, outputs = [out]}
}

// -----

// full absorbs an or.
// CHECK-LABEL: @or_absorbs_full
// CHECK: mask = #attn.full,
attn.kernel @or_absorbs_full {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.or<[#attn.causal<top_left>, #attn.full]>, outputs = [out]}
}

// -----

// Nested ors flatten; windows of one alignment unite (max of the bounds).
// CHECK-LABEL: @or_flatten_merge
// CHECK: mask = #attn.or<[#attn.sliding_window<left = inf, right = 16>, #attn.block_sparse<block = [64, 64], layout = {{\[\[}}0, 1], [1, 0]]>]>,
attn.kernel @or_flatten_merge {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.or<[#attn.causal<top_left>, #attn.or<[#attn.block_sparse<block = [64, 64], layout = [[0, 1], [1, 0]]>, #attn.sliding_window<left = 3, right = 16>]>]>, outputs = [out]}
}

// -----

// A union of windows that becomes unbounded on both sides is full, and absorbs the or.
// CHECK-LABEL: @or_windows_to_full
// CHECK: mask = #attn.full,
attn.kernel @or_windows_to_full {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.or<[#attn.causal<top_left>, #attn.sliding_window<left = 0, right = inf>, #attn.longformer<block = 64, window = 1, global = [0]>]>, outputs = [out]}
}

// -----

// An or nested in an and is normalized in place, and the and keeps it.
// CHECK-LABEL: @and_of_or
// CHECK: mask = #attn.and<[#attn.sliding_window<left = inf, right = 0, align = bottom_right>, #attn.or<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>]>]>,
attn.kernel @and_of_or {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.causal<bottom_right>, #attn.or<[#attn.longformer<block = 64, window = 1, global = [0]>, #attn.or<[#attn.bigbird<block = 64, window = 0, global = 1, random = 1, seed = 7>, #attn.longformer<block = 64, window = 1, global = [0]>]>]>]>, outputs = [out]}
}

// -----

// Block layouts and generators are already canonical; regions are untouched.
// CHECK-LABEL: @generators_and_regions
// CHECK: mask = #attn.bigbird<block = 32, window = 1, global = 1, random = 2, seed = 3>, scale = 1.250000e-01, outputs = [out]} mask_mod {
// CHECK: arith.cmpi ule
// CHECK: attn.yield
attn.kernel @generators_and_regions {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.bigbird<block = 32, window = 1, global = 1, random = 2, seed = 3>, outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %keep = arith.cmpi ule, %kv, %q : index
      attn.yield %keep : i1
    }
}
