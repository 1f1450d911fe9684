// attn-lower-flash-to-cpu on an attn.flash with varlen = cu_seqlens: the prefill tile function
// (FlashKernel.cpp) takes the offsets cu_seqlens_q and cu_seqlens_kv after lse, reads sequence
// b's bounds from them (its lengths and first rows, in place of the batch strides), keeps its
// buffers in the entry block, and computes only when the tile starts inside the sequence (the
// grid spans the longest one).
// RUN: attnc-opt %s --attn-lower-flash-to-cpu | FileCheck %s

// CHECK: module attributes {attn.cpu_kernels = [{{{.*}}name = "varlen"{{.*}}varlen}]}
// CHECK-LABEL: func.func @varlen_tile(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[CUQ:.*]]: memref<?xi32>, %[[CUKV:.*]]: memref<?xi32>, %[[PARAMS:.*]]: memref<?xi64>, %[[B:.*]]: index, %{{.*}}: index, %[[T:.*]]: index) -> i32
// cu_seqlens_q[b] and [b + 1], each at its stride (params[17]); then cu_seqlens_kv's (params[18]).
// CHECK: %[[C17:.*]] = arith.constant 17 : index
// CHECK: memref.load %[[PARAMS]][%[[C17]]]
// CHECK: %[[QFIRST:.*]] = memref.load %[[CUQ]][
// CHECK: %[[QEND:.*]] = memref.load %[[CUQ]][
// CHECK: %[[C18:.*]] = arith.constant 18 : index
// CHECK: memref.load %[[PARAMS]][%[[C18]]]
// CHECK: memref.load %[[CUKV]][
// CHECK: memref.load %[[CUKV]][
// CHECK: %[[Q0:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK: memref.alloca() : memref<1xi32>
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt, %[[Q0]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[INSIDE]] {
// CHECK-NOT: memref.alloca
// CHECK: return
attn.kernel @varlen {
  attn.flash {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bshd,
              mask = #attn.sliding_window<left = inf, right = 0, align = bottom_right>,
              scale = 0.125, outputs = [out, lse], varlen = cu_seqlens, block_q = 64, block_kv = 64}
}
