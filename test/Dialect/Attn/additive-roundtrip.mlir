// Additive scores (additive = @v) print and parse back, in the custom and the generic form;
// attn-normalize fills their default scale, 1 (Bahdanau's scores have none), and
// attn-tile-flash carries the attribute to attn.flash.
// RUN: attnc-opt %s | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash | FileCheck %s --check-prefix=TILED

// CHECK-LABEL: attn.kernel @bahdanau
// CHECK: attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, outputs = [out, lse], inputs = [va: f32 [heads, head_dim]], additive = @va}
// TILED-LABEL: attn.kernel @bahdanau
// TILED: attn.flash {num_heads = 4, num_kv_heads = 4, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full, scale = 1.000000e+00, outputs = [out, lse], inputs = [va: f32 [heads, head_dim]], additive = @va, block_q = {{[0-9]+}}, block_kv = {{[0-9]+}}}
attn.kernel @bahdanau {
  attn.attention {num_heads = 4, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.full,
                  outputs = [out, lse], inputs = [va: f32 [heads, head_dim]], additive = @va}
}

// CHECK-LABEL: attn.kernel @shared_scaled
// CHECK: scale = 5.000000e-01, outputs = [out], inputs = [w: f32 [head_dim]], additive = @w}
// TILED-LABEL: attn.kernel @shared_scaled
// TILED: scale = 5.000000e-01, outputs = [out], inputs = [w: f32 [head_dim]], additive = @w,
attn.kernel @shared_scaled {
  attn.attention {num_heads = 2, head_dim = 32, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<top_left>, scale = 0.5, outputs = [out],
                  inputs = [w: f32 [head_dim]], additive = @w}
}
