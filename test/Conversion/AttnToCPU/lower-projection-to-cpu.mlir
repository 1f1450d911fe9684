// attn-lower-flash-to-cpu on attn.projection: one phase, @<name>_tile (x, weight, bias, y,
// params, the item b, m, n), whose 256-row x 64-column tile of y = x W^T + b reads a few rows
// against nn.Linear weights in place (a dot product per output; a block's four weight rows
// summed across lanes together: pairs of vectors, then halves of the one left), and
// otherwise packs its 64 weight columns once (nn.Linear's transposed in registers) and runs
// register blocks of FMAs over 64-row sub-tiles. MatMul weights (onnx) are packed as rows.
// RUN: attnc-opt %s --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s

// CHECK: attn.cpu_kernels = [{dtype = f32, in_features = 64 : i64, layout = 0 : i64, name = "proj", op = "attn.projection", out_features = 80 : i64}, {dtype = bf16, in_features = 32 : i64, layout = 0 : i64, name = "matmul", onnx_weights, op = "attn.projection", out_features = 16 : i64}]
// CHECK-LABEL: func.func @proj_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index) -> i32 attributes {llvm.emit_c_interface}
// CHECK-NOT: vector.reduction
// CHECK: %[[P0:.*]] = vector.shuffle %[[ACC:.*]]#0, %[[ACC]]#1 [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK: vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK: vector.shuffle %[[ACC]]#2, %[[ACC]]#3 [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK: vector.shuffle %[[S:[^,]*]], %[[S]] [0, 2, 4, 6] : vector<8xf32>, vector<8xf32>
// CHECK: vector.extract %{{.*}}[3] : f32 from vector<4xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: vector.shuffle
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c64
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: vector.maskedstore
attn.kernel @proj {
  attn.projection {in_features = 64, out_features = 80, dtype = f32, weights = pytorch}
}

// CHECK-LABEL: func.func @matmul_tile(
// CHECK-NOT: vector.reduction
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x32xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK-NOT: vector.shuffle
// CHECK: vector.fma %{{.*}} : vector<8xf32>
attn.kernel @matmul {
  attn.projection {in_features = 32, out_features = 16, dtype = bf16, weights = onnx}
}
