// attn-lower-flash-to-halide-call on linear attention kernels (CPU): a tile function per
// phase of the family, each forwarding its views (null past the kernel's), params and item
// coordinates (0 past the phase's) to attnc_rt_halide_linear with both Halide pipelines (the
// rows one: C form q, [k, v,] s, z, out; the state one) and the phase's number and the
// kernel's facts. GPU devices refuse them at the op.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call | FileCheck %s
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=cuda 2>&1 | FileCheck %s --check-prefix=CUDA

// CHECK-NOT: attn.kernel
// CHECK: attn.cpu_kernels = [{{.*}}name = "causal"{{.*}}op = "attn.linear_attention"{{.*}}name = "encoder"
// The causal kernel (state = carry: eight views): one phase over (b, g).
// CHECK: llvm.func @causal_halide(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @causal_halide_state(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @_mlir_ciface_causal_tile(%[[Q:[^:]*]]: !llvm.ptr, {{.*}}, %[[FINAL_NORM:[^:]*]]: !llvm.ptr, %[[P:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: i64, %[[G:[^:]*]]: i64) -> i32
// CHECK-NOT: llvm.func
// phase 2 (causal), 8 heads over 2 KV heads, head_dim 40, value_dim 24, f32, chunks of 32,
// state slices of 256, blocks of 4 rows, carry
// CHECK-DAG: %[[PHASE:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[CHUNK:.*]] = llvm.mlir.constant(32 : i64)
// CHECK-DAG: %[[VD:.*]] = llvm.mlir.constant(24 : i64)
// CHECK: llvm.call @attnc_rt_halide_linear(%{{.*}}, %{{.*}}, %[[Q]], {{.*}}, %[[FINAL_NORM]], %[[P]], %[[B]], %[[G]], %{{.*}}, %[[PHASE]], {{.*}}, %[[VD]], {{.*}}, %[[CHUNK]],
// The non-causal kernel: the state phase over (b, g), then the attention phase over
// (b, h, q_tile) in tiles of 64 rows; two scratch views, then two null ones.
// CHECK: llvm.func @encoder_halide(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @_mlir_ciface_encoder_tile(%{{[^:]*}}: !llvm.ptr, {{.*}}, %[[P2:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64) -> i32
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @attnc_rt_halide_linear({{.*}}, %[[NULL]], %[[NULL]], %[[P2]],
// CHECK: llvm.func @_mlir_ciface_encoder_attention_tile({{.*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64) -> i32
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-DAG: %[[ROWS:.*]] = llvm.mlir.constant(64 : i64)
// CHECK: llvm.call @attnc_rt_halide_linear({{.*}}, %[[ONE]], {{.*}}, %[[ROWS]],
// CUDA: error: 'attn.linear_attention' op is built by the Halide backend on CPU targets only, not for device cuda
attn.kernel @causal {
  attn.linear_attention {num_heads = 8, num_kv_heads = 2, head_dim = 40, value_dim = 24,
                         dtype = f32, layout = bhsd, feature_map = elu1, causal = true,
                         chunk = 32, state = carry}
}
attn.kernel @encoder {
  attn.linear_attention {num_heads = 4, head_dim = 32, dtype = bf16, layout = bshd,
                         feature_map = relu}
}
