// attn-lower-flash-to-halide-call: each tiled kernel becomes the runtime's tile function,
// forwarding to attnc_rt_halide_tile with its Halide pipeline and constants, and its facts
// land in attn.cpu_kernels for attn-emit-cpu-entry.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call | FileCheck %s

// CHECK-NOT: attn.kernel
// CHECK: attn.cpu_kernels = [{block_q = 64 : i64, dtype = bf16, head_dim = 96 : i64, {{.*}}name = "gqa", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]
// CHECK: llvm.func @gqa_halide(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @attnc_rt_halide_tile(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK: llvm.func @_mlir_ciface_gqa_tile(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[H:.*]]: i64, %[[T:.*]]: i64) -> i32
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @gqa_halide
// block_q, head_dim, query heads per kv head, element bytes, DLPack code (kDLBfloat)
// CHECK-DAG: %[[BQ:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-DAG: %[[D:.*]] = llvm.mlir.constant(96 : i64)
// CHECK-DAG: %[[G:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-DAG: %[[E:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[C:.*]] = llvm.mlir.constant(4 : i64)
// CHECK: %[[R:.*]] = llvm.call @attnc_rt_halide_tile(%[[FN]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[P]], %[[B]], %[[H]], %[[T]], %[[BQ]], %[[D]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.return %[[R]] : i32
attn.kernel @gqa {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 96, dtype = bf16, layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}
