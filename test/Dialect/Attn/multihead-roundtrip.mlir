// attn.multihead_attention prints and parses back, in the custom and the generic form, with
// its default weight layout (pytorch); attn-normalize normalizes its attention and
// attn-tile-flash tiles it in place, as a kernel's own.
// RUN: attnc-opt %s | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --mlir-print-op-generic | attnc-opt | FileCheck %s
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash | FileCheck %s --check-prefix=TILED

// CHECK-LABEL: attn.kernel @bert
// CHECK: attn.multihead_attention {embed_dim = 768, dtype = f32, weights = pytorch} {
// CHECK-NEXT: attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.causal<top_left>, outputs = [out]}
// TILED-LABEL: attn.kernel @bert
// TILED: attn.multihead_attention {embed_dim = 768, dtype = f32, weights = pytorch} {
// TILED-NEXT: attn.flash {num_heads = 12, num_kv_heads = 12, head_dim = 64, dtype = f32, layout = bshd, mask = #attn.sliding_window<left = inf, right = 0>, scale = 1.250000e-01, outputs = [out], block_q = {{[0-9]+}}, block_kv = {{[0-9]+}}}
attn.kernel @bert {
  attn.multihead_attention {embed_dim = 768, dtype = f32} {
    attn.attention {num_heads = 12, head_dim = 64, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}

// CHECK-LABEL: attn.kernel @onnx_gqa
// CHECK: attn.multihead_attention {embed_dim = 256, dtype = bf16, weights = onnx} {
// CHECK: score_mod
attn.kernel @onnx_gqa {
  attn.multihead_attention {weights = onnx, dtype = bf16, embed_dim = 256} {
    attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.full, outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %cap = arith.constant 20.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %t, %cap : f32
      attn.yield %r : f32
    }
  }
}

// CHECK-LABEL: attn.kernel @padded
// CHECK: attn.multihead_attention {embed_dim = 64, dtype = f32, weights = pytorch, key_padding = lengths} {
// TILED-LABEL: attn.kernel @padded
// TILED: key_padding = lengths
attn.kernel @padded {
  attn.multihead_attention {key_padding = lengths, embed_dim = 64, dtype = f32} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.causal<top_left>, outputs = [out]}
  }
}

// key_padding = none is the default, printed as nothing.
// CHECK-LABEL: attn.kernel @unpadded
// CHECK: attn.multihead_attention {embed_dim = 64, dtype = f32, weights = pytorch} {
attn.kernel @unpadded {
  attn.multihead_attention {embed_dim = 64, dtype = f32, key_padding = none} {
    attn.attention {num_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                    mask = #attn.full, outputs = [out]}
  }
}
