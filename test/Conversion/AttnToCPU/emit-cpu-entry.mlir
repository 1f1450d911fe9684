// attn-emit-cpu-entry: each kernel listed in attn.cpu_kernels gets its runtime descriptor
// and exported C entry point (LLVM dialect).
// RUN: attnc-opt %s --split-input-file --attn-emit-cpu-entry --verify-diagnostics | FileCheck %s

// CHECK-NOT: attn.cpu_kernels
// CHECK: llvm.func @attnc_rt_launch(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.mlir.global private constant @k_name("k\00")
// CHECK: llvm.mlir.global internal constant @k_desc() {{.*}} : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32, i64, i64, ptr, ptr)>
// ABI version, heads, kv heads, head_dim, 32-bit floats, layout, outputs, block_q.
// CHECK: llvm.mlir.constant(1 : i32)
// CHECK: llvm.mlir.constant(8 : i32)
// CHECK: llvm.mlir.constant(2 : i32)
// CHECK: llvm.mlir.constant(128 : i32)
// CHECK: llvm.mlir.constant(32 : i32)
// CHECK: llvm.mlir.addressof @k_name
// CHECK: llvm.mlir.addressof @_mlir_ciface_k_tile
// CHECK: llvm.func @k(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[OPT:.*]]: !llvm.ptr) -> i32
// CHECK: %[[D:.*]] = llvm.mlir.addressof @k_desc
// CHECK: llvm.call @attnc_rt_launch(%[[D]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[OPT]])
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: no tile function _mlir_ciface_lost_tile}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "lost", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
}
