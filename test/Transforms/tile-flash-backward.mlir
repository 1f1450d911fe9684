// attn-tile-flash: a normalized backward spec (outputs = [dq, dk, dv]) becomes
// attn.flash_backward, with the forward's tile sizes and kv_chunks (kv-chunks; 0: 4), and its
// regions moved over.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash | FileCheck %s
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash="block-q=32 block-kv=16 kv-chunks=7" | FileCheck %s --check-prefix=SIZES

// CHECK-LABEL: attn.kernel @softcap_backward
// CHECK-NEXT: attn.flash_backward {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = inf, right = 0>, scale = 1.250000e-01, outputs = [dq, dk, dv], block_q = 64, block_kv = 64, kv_chunks = 4} score_mod {
// CHECK: math.tanh
// CHECK-NOT: attn.attention
// SIZES: block_q = 32, block_kv = 16, kv_chunks = 7}
attn.kernel @softcap_backward {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %t = math.tanh %s : f32
    attn.yield %t : f32
  }
}

// The forward of the same spec stays attn.flash.
// CHECK-LABEL: attn.kernel @softcap_forward
// CHECK-NEXT: attn.flash {{{.*}}outputs = [out, lse], block_q = 64, block_kv = 64}
attn.kernel @softcap_forward {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
}
