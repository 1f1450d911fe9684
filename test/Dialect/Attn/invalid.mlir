// Every spec a backend could not implement is a diagnostic at the offending location that
// says what would be valid.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics

attn.kernel @gqa_not_divisible {
  // expected-error @below {{num_heads (32) must be a multiple of num_kv_heads (5)}}
  attn.attention {num_heads = 32, num_kv_heads = 5, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @kv_more_than_q {
  // expected-error @below {{num_heads (4) must be a multiple of num_kv_heads (8)}}
  attn.attention {num_heads = 4, num_kv_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @zero_heads {
  // expected-error @below {{num_heads must be positive, got 0}}
  attn.attention {num_heads = 0, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @negative_kv_heads {
  // expected-error @below {{num_kv_heads must be positive, got -2}}
  attn.attention {num_heads = 8, num_kv_heads = -2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @zero_head_dim {
  // expected-error @below {{head_dim must be positive, got 0}}
  attn.attention {num_heads = 8, head_dim = 0, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @negative_head_dim {
  // expected-error @below {{head_dim must be positive, got -64}}
  attn.attention {num_heads = 8, head_dim = -64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @huge_head_dim {
  // expected-error @below {{head_dim must be at most 1024, got 9223372036854775807}}
  attn.attention {num_heads = 8, head_dim = 9223372036854775807, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @bigbird_too_many_random {
  // expected-error @below {{#attn.bigbird 'random' must be at most 64 blocks per block row, got 1000}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.bigbird<block = 64, window = 1, global = 1, random = 1000, seed = 1>, outputs = [out]}
}

// -----

attn.kernel @integer_dtype {
  // expected-error @below {{dtype must be f32, f16 or bf16, got 'i32'}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = i32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @f64_dtype {
  // expected-error @below {{dtype must be f32, f16 or bf16, got 'f64'}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f64, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @negative_scale {
  // expected-error @below {{scale must be a finite number > 0, got -1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = -1.0, outputs = [out]}
}

// -----

attn.kernel @unknown_layout {
  // expected-error @below {{unknown layout 'bsdh'; expected bhsd or bshd}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bsdh, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @unknown_parameter {
  // expected-error @below {{unknown attention parameter 'window'; expected one of num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, outputs, num_splits}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, window = 4, outputs = [out]}
}

// -----

attn.kernel @duplicate_parameter {
  // expected-error @below {{attention parameter 'head_dim' is given twice}}
  attn.attention {num_heads = 8, head_dim = 64, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @missing_mask {
  // expected-error @below {{attention parameter 'mask' is required}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, outputs = [out]}
}

// -----

attn.kernel @not_a_mask {
  // expected-error @below {{expected a mask attribute (#attn.full, #attn.causal, #attn.sliding_window, #attn.block_sparse, #attn.longformer, #attn.bigbird, #attn.and, #attn.or), got 1 : i64}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = 1, outputs = [out]}
}

// -----

attn.kernel @unknown_output {
  // expected-error @below {{unknown output 'probs'; expected out, lse, weights or the gradients dq, dk, dv}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out, probs]}
}

// -----

attn.kernel @duplicate_output {
  // expected-error @below {{output 'out' listed twice}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out, out]}
}

// -----

attn.kernel @no_outputs {
  // expected-error @below {{outputs must name at least one of out, lse, weights}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = []}
}

// -----

attn.kernel @weights_unbounded {
  // expected-error @below {{output 'weights' is seq_q x seq_kv per head and needs a bound: add max_seq = [seq_q, seq_kv] with seq_q * seq_kv <= 16777216}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out, weights]}
}

// -----

attn.kernel @weights_too_large {
  // expected-error @below {{output 'weights' with max_seq = [8192, 8192] would hold 67108864 entries per head; the limit is 16777216}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, max_seq = [8192, 8192], outputs = [weights]}
}

// -----

attn.kernel @bad_max_seq {
  // expected-error @below {{max_seq must be [seq_q, seq_kv] with both > 0}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, max_seq = [128, 0], outputs = [out]}
}

// -----

attn.kernel @negative_window {
  // expected-error @below {{#attn.sliding_window 'left' must be >= 0 or inf, got -3}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = -3, right = 0>, outputs = [out]}
}

// -----

attn.kernel @negative_window_right {
  // expected-error @below {{#attn.sliding_window 'right' must be >= 0 or inf, got -1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = inf, right = -1>, outputs = [out]}
}

// -----

attn.kernel @ragged_block_layout {
  // expected-error @below {{block layout row has 3 entries but the first row has 2; every row needs one entry per key block}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64, 64], layout = [[1, 0], [1, 1, 0]]>, outputs = [out]}
}

// -----

attn.kernel @block_layout_entry {
  // expected-error @below {{block layout entries must be 0 or 1, got 2}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64, 64], layout = [[1, 2]]>, outputs = [out]}
}

// -----

attn.kernel @block_layout_empty {
  // expected-error @below {{#attn.block_sparse layout is empty; it needs at least one row of one block}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64, 64], layout = [[]]>, outputs = [out]}
}

// -----

attn.kernel @block_size_zero {
  // expected-error @below {{#attn.block_sparse 'block_kv' must be a positive number of tokens, got 0}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64, 0], layout = [[1]]>, outputs = [out]}
}

// -----

attn.kernel @block_size_arity {
  // expected-error @below {{#attn.block_sparse 'block' must be [block_q, block_kv], got 1 values}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64], layout = [[1]]>, outputs = [out]}
}

// -----

attn.kernel @block_layout_too_small {
  // expected-error @below {{block layout covers [128, 128] positions but max_seq allows [256, 128]; add blocks or lower max_seq}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.block_sparse<block = [64, 64], layout = [[1, 0], [1, 1]]>, max_seq = [256, 128], outputs = [out]}
}

// -----

// An `or` of block layouts covers the most of its operands', an `and` the least.
attn.kernel @composed_layout_too_small {
  // expected-error @below {{block layout covers [192, 64] positions but max_seq allows [256, 64]; add blocks or lower max_seq}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.causal<top_left>, #attn.or<[#attn.block_sparse<block = [64, 64], layout = [[1], [1]]>, #attn.block_sparse<block = [64, 32], layout = [[1, 1], [1, 1], [1, 0]]>]>]>, max_seq = [256, 64], outputs = [out]}
}

// -----

attn.kernel @longformer_negative_window {
  // expected-error @below {{#attn.longformer 'window' must be >= 0, got -1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.longformer<block = 64, window = -1, global = [0]>, outputs = [out]}
}

// -----

attn.kernel @longformer_negative_global {
  // expected-error @below {{#attn.longformer global block indices must be >= 0, got -1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.longformer<block = 64, window = 1, global = [-1]>, outputs = [out]}
}

// -----

attn.kernel @longformer_duplicate_global {
  // expected-error @below {{#attn.longformer global block 3 is listed twice}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.longformer<block = 64, window = 1, global = [3, 3]>, outputs = [out]}
}

// -----

attn.kernel @bigbird_block_zero {
  // expected-error @below {{#attn.bigbird 'block' must be a positive number of tokens, got 0}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.bigbird<block = 0, window = 1, global = 1, random = 2, seed = 1>, outputs = [out]}
}

// -----

attn.kernel @bigbird_negative_random {
  // expected-error @below {{#attn.bigbird 'random' must be >= 0, got -2}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.bigbird<block = 64, window = 1, global = 1, random = -2, seed = 1>, outputs = [out]}
}

// -----

attn.kernel @and_of_one {
  // expected-error @below {{#attn.and composes two or more masks, got 1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.and<[#attn.full]>, outputs = [out]}
}

// -----

attn.kernel @or_of_non_mask {
  // expected-error @below {{#attn.or operand 1 ("causal") is not a mask}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.or<[#attn.full, "causal"]>, outputs = [out]}
}

// -----

attn.kernel @score_mod_arity {
  // expected-error @below {{score_mod takes 5 arguments (score: f32, b, h, q_idx, kv_idx: index), got 1}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32):
      attn.yield %s : f32
    }
}

// -----

attn.kernel @score_mod_arg_type {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    // expected-error @below {{score_mod argument #0 must be 'f32' (signature (score: f32, b, h, q_idx, kv_idx: index)), got 'f16'}}
    ^bb0(%s: f16, %b: index, %h: index, %q: index, %kv: index):
      %c = arith.constant 1.0 : f32
      attn.yield %c : f32
    }
}

// -----

attn.kernel @score_mod_yield_type {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'attn.yield' op in score_mod must yield exactly one 'f32', got ('index')}}
      attn.yield %q : index
    }
}

// -----

attn.kernel @score_mod_yield_two {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'attn.yield' op in score_mod must yield exactly one 'f32', got ('f32', 'f32')}}
      attn.yield %s, %s : f32, f32
    }
}

// -----

attn.kernel @mask_mod_arity {
  // expected-error @below {{mask_mod takes 4 arguments (b, h, q_idx, kv_idx: index), got 2}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    mask_mod {
    ^bb0(%q: index, %kv: index):
      %keep = arith.cmpi ule, %kv, %q : index
      attn.yield %keep : i1
    }
}

// -----

attn.kernel @mask_mod_arg_type {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    mask_mod {
    // expected-error @below {{mask_mod argument #3 must be 'index' (signature (b, h, q_idx, kv_idx: index)), got 'i32'}}
    ^bb0(%b: index, %h: index, %q: index, %kv: i32):
      %t = arith.constant true
      attn.yield %t : i1
    }
}

// -----

attn.kernel @mask_mod_yields_float {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %bias = arith.constant 0.0 : f32
      // expected-error @below {{'attn.yield' op in mask_mod must yield exactly one 'i1', got ('f32')}}
      attn.yield %bias : f32
    }
}

// -----

attn.kernel @region_uses_outer_value {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{use of undeclared SSA value name}}
      attn.yield %outer : f32
    }
}

// -----

// expected-error @below {{'attn.attention' op expects parent op to be one of 'attn.kernel, attn.multihead_attention'}}
attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}

// -----

// expected-error @below {{'attn.kernel' op must hold exactly one attn.attention (or attn.flash) or attn.linear_attention, found 2}}
attn.kernel @two_attentions {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [lse]}
}

// -----

// expected-error @below {{'attn.kernel' op must hold exactly one attn.attention (or attn.flash) or attn.linear_attention, found 0}}
attn.kernel @empty {
}

// -----

attn.kernel @stray_op {
  // expected-error @below {{'arith.constant' op cannot appear in an attn.kernel body; a kernel holds exactly one attn.attention}}
  %c = arith.constant 1 : index
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

// expected-note @below {{see existing symbol definition here}}
attn.kernel @dup {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}
// expected-error @below {{redefinition of symbol named 'dup'}}
attn.kernel @dup {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}

// -----

attn.kernel @yield_outside {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
}
// expected-error @below {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.flash, attn.flash_backward'}}
attn.yield

// -----

attn.kernel @vector_in_mod {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'arith.constant' op in score_mod must produce scalars, got 'vector<4xf32>'}}
      %v = arith.constant dense<1.0> : vector<4xf32>
      attn.yield %s : f32
    }
}

// -----

attn.kernel @unsupported_op_in_mod {
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'math.cbrt' op is not supported in score_mod; bodies may use scalar arith and math ops (see the attn.attention documentation)}}
      %c = math.cbrt %s : f32
      attn.yield %c : f32
    }
}

// -----
// attn.flash: the tiled form holds a normalized spec with positive tile sizes.

attn.kernel @flash_no_tile {
  // expected-error @below {{attention parameter 'block_kv' is required}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64}
}

// -----

attn.kernel @flash_zero_tile {
  // expected-error @below {{block_q and block_kv must be positive, got 64 and 0}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 0}
}

// -----

attn.kernel @flash_unnormalized {
  // expected-error @below {{holds a normalized spec: num_kv_heads and scale must be given (attn-normalize fills them in)}}
  attn.flash {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @flash_causal {
  // expected-error @below {{write #attn.causal<a> as #attn.sliding_window<left = inf, right = 0, align = a>}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @flash_weights {
  // expected-error @below {{output 'weights' is seq_q x seq_kv per head and needs a bound: add max_seq = [seq_q, seq_kv] with seq_q * seq_kv <= 16777216}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out, weights], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @flash_bad_gqa {
  // expected-error @below {{num_heads (6) must be a multiple of num_kv_heads (4)}}
  attn.flash {num_heads = 6, num_kv_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @flash_unknown_parameter {
  // expected-error @below {{unknown attention parameter 'block_d'; expected one of num_heads, num_kv_heads, head_dim, dtype, layout, mask, scale, max_seq, outputs, num_splits, kv_cache, varlen, inputs, additive, block_q, block_kv}}
  attn.flash {num_heads = 2, block_d = 4}
}

// -----

// expected-error @below {{'attn.kernel' op must hold exactly one attn.attention (or attn.flash) or attn.linear_attention, found 2}}
attn.kernel @two_forms {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out]}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
}

// -----

attn.kernel @decode_negative_splits {
  // expected-error @below {{num_splits must be 0 (auto) to 256, got -1}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = -1}
}

// -----

attn.kernel @decode_too_many_splits {
  // expected-error @below {{num_splits must be 0 (auto) to 256, got 257}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 257}
}

// -----

attn.kernel @decode_weights {
  // expected-error @below {{output 'weights' is not computed by a split-KV decode kernel (num_splits); drop one of them}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, max_seq = [4, 1024], outputs = [out, weights], num_splits = 0}
}

// -----

attn.kernel @decode_too_many_rows {
  // expected-error @below {{a decode kernel (num_splits) computes the 32 query heads of a KV head x 16 query positions (max_seq's seq_q, 16 when not given) = 512 rows together; at most 256 rows and 65536 rows x head_dim are allowed: lower max_seq's seq_q}}
  attn.attention {num_heads = 32, num_kv_heads = 1, head_dim = 128, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 0}
}

// -----

attn.kernel @kv_cache_without_num_splits {
  // expected-error @below {{kv_cache (per-sequence lengths, pages) is built for split-KV decode kernels (and kv_cache = lengths for packed sequences, varlen): add num_splits (0: auto)}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], kv_cache = lengths}
}

// -----

attn.kernel @kv_cache_page_too_large {
  // expected-error @below {{kv_cache = paged<N> needs N in 1 to 256 tokens per page, got 512}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 0, kv_cache = paged<512>}
}

// -----

attn.kernel @kv_cache_page_zero {
  // expected-error @below {{paged<N> needs N >= 1 tokens per page, got 0}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 0, kv_cache = paged<0>}
}

// -----

attn.kernel @kv_cache_unknown {
  // expected-error @below {{unknown kv_cache 'ragged'; expected lengths or paged<N>}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 0, kv_cache = ragged}
}

// -----

attn.kernel @kv_cache_page_layout_unknown {
  // expected-error @below {{unknown page layout 'hdn'; expected nhd ([num_pages, N, kv_heads, head_dim]) or hnd ([num_pages, kv_heads, N, head_dim])}}
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], num_splits = 0, kv_cache = paged<16, hdn>}
}

// -----

attn.kernel @pages_head_major_without_pages {
  // expected-error @below {{pages_head_major (kv_cache = paged<N, hnd>) needs pages: kv_cache = paged<N, hnd>}}
  "attn.attention"() <{dtype = f32, head_dim = 64 : i64, layout = 0 : i32, mask = #attn.full, num_heads = 8 : i64, num_splits = 0 : i64, outputs = 1 : i32, page_size = 0 : i64, pages_head_major}> ({}, {}) : () -> ()
}

// -----

attn.kernel @varlen_unknown {
  // expected-error @below {{unknown varlen 'padded'; expected cu_seqlens (sequences packed end to end, delimited by int32 offsets)}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out], varlen = padded}
}

// -----

attn.kernel @varlen_head_major {
  // expected-error @below {{varlen = cu_seqlens packs sequences token after token ([total, heads, head_dim]): it needs layout = bshd}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out], varlen = cu_seqlens}
}

// -----

attn.kernel @varlen_decode {
  // expected-error @below {{varlen = cu_seqlens is not built for decode kernels (num_splits) yet: give each sequence's KV length with kv_cache = lengths and num_splits instead}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out], num_splits = 0, varlen = cu_seqlens}
}

// -----

attn.kernel @varlen_paged {
  // expected-error @below {{varlen = cu_seqlens takes kv_cache = lengths (the keys each sequence uses), not pages}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out], kv_cache = paged<16>, varlen = cu_seqlens}
}

// -----

attn.kernel @varlen_weights {
  // expected-error @below {{output 'weights' is not computed for packed sequences (varlen); drop one of them}}
  attn.attention {num_heads = 8, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, max_seq = [64, 64], outputs = [out, weights], varlen = cu_seqlens}
}

// -----

attn.kernel @input_constant_index_outside {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [slopes: f32 [heads]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %c4 = arith.constant 4 : index
      // expected-error @below {{'attn.load' op index 4 of dim 0 lies outside 'slopes' (dim 0 is heads = 4)}}
      %x = attn.load @slopes[%c4] : f32
      attn.yield %x : f32
    }
}

// -----

attn.kernel @input_negative_index {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [ids: i32 [batch, seq_kv]]}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %m = arith.constant -1 : index
      // expected-error @below {{'attn.load' op index -1 of dim 1 lies outside 'ids' (dim 1 is seq_kv)}}
      %x = attn.load @ids[%b, %m] : i32
      %t = arith.constant true
      attn.yield %t : i1
    }
}

// -----

attn.kernel @input_undeclared {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [slopes: f32 [heads]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'attn.load' op reads 'slope', which the spec's inputs do not declare}}
      %x = attn.load @slope[%h] : f32
      attn.yield %x : f32
    }
}

// -----

attn.kernel @input_rank {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [x: f32 [seq_q]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'attn.load' op reads 'x' with 2 indices; it has 1 dims}}
      %x = attn.load @x[%q, %kv] : f32
      attn.yield %x : f32
    }
}

// -----

attn.kernel @input_type {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [x: i32 [seq_q]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      // expected-error @below {{'attn.load' op yields 'f32' but 'x' holds 'i32'}}
      %x = attn.load @x[%q] : f32
      attn.yield %x : f32
    }
}

// -----

attn.kernel @input_reserved_name {
  // expected-error @below {{input name 'lse' must be a C identifier other than the kernel's own tensors (q, k, v, out, lse, weights, ...)}}
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [lse: f32 [heads]]}
}

// -----

attn.kernel @input_twice {
  // expected-error @below {{input 'x' is declared twice}}
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [x: f32 [heads], x: f32 [seq_q]]}
}

// -----

attn.kernel @input_element_type {
  // expected-error @below {{input 'x' has type 'i64'; inputs are i32 or f32}}
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  outputs = [out], inputs = [x: i64 [seq_q]]}
}

// -----

attn.kernel @input_dim_symbol {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  // expected-error @below {{input dim names 'seq', not one of batch, heads, kv_heads, seq_q, seq_kv, head_dim}}
                  outputs = [out], inputs = [x: f32 [3 * seq]]}
}

// -----

attn.kernel @input_dim_factor {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  // expected-error @below {{input dim multiplies by 65; the factor must be 1 to 64}}
                  outputs = [out], inputs = [x: f32 [65 * seq_q]]}
}

// -----

attn.kernel @input_generic_dim {
  // expected-error @below {{input 'x' has dim "seq_q+0"; a dim is [S*]symbol[+C|-C] over batch, heads, kv_heads, seq_q, seq_kv, head_dim}}
  "attn.attention"() <{num_heads = 4 : i64, head_dim = 64 : i64, dtype = f32, layout = 0 : i32, mask = #attn.full, outputs = 1 : i32, inputs = [#attn.input<"x", f32, ["seq_q+0"]>]}> ({}, {}) : () -> ()
}

// -----

attn.kernel @input_paged_seq_kv {
  // expected-error @below {{input 'ids' has dim "seq_kv", but a paged KV cache has no seq_kv (each sequence has its own length); use a constant bound}}
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [out], num_splits = 0, kv_cache = paged<16>,
                  inputs = [ids: i32 [batch, seq_kv]]}
}
