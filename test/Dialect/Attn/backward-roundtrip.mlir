// A backward spec (outputs = [dq, dk, dv], in any order) and its tiled form,
// attn.flash_backward, round-trip in the custom and the generic form.
// RUN: attnc-opt %s --split-input-file | attnc-opt --split-input-file | FileCheck %s
// RUN: attnc-opt %s --split-input-file --mlir-print-op-generic | attnc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: attn.kernel @grads {
// CHECK-NEXT: attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bshd, mask = #attn.causal<top_left>, outputs = [dq, dk, dv]}
attn.kernel @grads {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bshd,
                  mask = #attn.causal<top_left>, outputs = [dv, dq, dk]}
}

// -----

// CHECK-LABEL: attn.kernel @tiled {
// CHECK-NEXT: attn.flash_backward {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd, mask = #attn.full, scale = 2.500000e-01, outputs = [dq, dk, dv], block_q = 64, block_kv = 32, kv_chunks = 3} score_mod {
// CHECK: attn.yield
attn.kernel @tiled {
  attn.flash_backward {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bhsd,
                       mask = #attn.full, scale = 0.25, outputs = [dq, dk, dv], block_q = 64,
                       block_kv = 32, kv_chunks = 3}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %t = math.tanh %s : f32
    attn.yield %t : f32
  }
}

