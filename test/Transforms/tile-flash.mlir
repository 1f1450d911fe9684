// attn-tile-flash: each normalized attn.attention becomes attn.flash, the target-neutral
// tiled form, with the same parameters and regions plus the tile sizes; nothing else.
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --verify-diagnostics | FileCheck %s
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash="block-q=16 block-kv=48" --verify-diagnostics | FileCheck %s --check-prefix=SIZES

// CHECK-LABEL: attn.kernel @causal
// CHECK-NEXT: attn.flash {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = inf, right = 0>, scale = 1.250000e-01, outputs = [out, lse], block_q = 64, block_kv = 64}
// CHECK-NOT: attn.attention
// No target fact enters the tiled form: no vectors, no loops.
// CHECK-NOT: vector
// CHECK-NOT: scf.
// SIZES: block_q = 16, block_kv = 48}
// block_kv 0 is the automatic one: auto-block-kv (64) for 16-bit elements and auto-block-kv-f32
// for f32 (the registry's rule for the CUDA tensor-core kernels: 32, as TF32 scores and P take
// twice the registers of 16-bit ones).
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash="block-kv=0" --verify-diagnostics | FileCheck %s --check-prefix=AUTO
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash="block-kv=0 auto-block-kv-f32=32" --verify-diagnostics | FileCheck %s --check-prefix=TC
// RUN: sed -e 's/dtype = f32/dtype = bf16/' %s | attnc-opt --split-input-file --attn-normalize --attn-tile-flash="block-kv=0 auto-block-kv-f32=32" --verify-diagnostics | FileCheck %s --check-prefix=TC16
// An explicit block_kv stays as it is under the rule.
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash="block-kv=48 auto-block-kv-f32=32" --verify-diagnostics | FileCheck %s --check-prefix=KV48
// The automatic block_q by head_dim, as numbers (the registry's rule for the Halide GPU
// schedule, whose state sits in shared memory: 16, or 8 for head_dim > 128).
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash="auto-block-q=16 auto-block-q-large-head=8" --verify-diagnostics | FileCheck %s --check-prefix=RULEQ
// RULEQ: head_dim = 64, {{.*}}block_q = 16, block_kv = 64}
// RULEQ: head_dim = 256, {{.*}}block_q = 8, block_kv = 64}
// AUTO: dtype = f32, {{.*}}block_q = 64, block_kv = 64}
// TC: dtype = f32, {{.*}}block_q = 64, block_kv = 32}
// TC16: dtype = bf16, {{.*}}block_q = 64, block_kv = 64}
// KV48: dtype = f32, {{.*}}block_q = 64, block_kv = 48}
attn.kernel @causal {
  attn.attention {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse]}
}

// -----

// The default block_q shrinks for large heads; the mod regions move over unchanged.
// CHECK-LABEL: attn.kernel @mods
// CHECK: attn.flash {{.*}}head_dim = 256, dtype = bf16{{.*}}block_q = 32, block_kv = 64} score_mod {
// CHECK: math.tanh
// CHECK: attn.yield
// CHECK: } mask_mod {
// CHECK: arith.cmpi ule
attn.kernel @mods {
  attn.attention {num_heads = 2, head_dim = 256, dtype = bf16, layout = bhsd, mask = #attn.full,
                  outputs = [out]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %keep = arith.cmpi ule, %kv, %q : index
      attn.yield %keep : i1
    }
}

// -----

// The weights output (with its max_seq bound) carries over to the tiled form.
// CHECK-LABEL: attn.kernel @weights
// CHECK-NEXT: attn.flash {{.*}}max_seq = [16, 16], outputs = [out, weights], block_q
attn.kernel @weights {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full,
                  max_seq = [16, 16], outputs = [out, weights]}
}

// -----
