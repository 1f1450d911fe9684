// attn-lower-flash-to-halide-call on a projection kernel (CPU): the projection phase's tile
// function forwards item (b, m, n) to attnc_rt_halide_projection with its Halide pipeline
// (C form: x, w, bias, y) and constants, and the kernel's entry facts are the projection
// family's. GPU devices refuse it at the op.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call | FileCheck %s
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=cuda 2>&1 | FileCheck %s --check-prefix=CUDA

// CHECK-NOT: attn.kernel
// CHECK: attn.cpu_kernels = [{{.*}}name = "qkv"{{.*}}op = "attn.projection"
// CHECK: llvm.func @qkv_halide(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @attnc_rt_halide_projection(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK: llvm.func @_mlir_ciface_qkv_tile(%[[X:.*]]: !llvm.ptr, %[[W:.*]]: !llvm.ptr, %[[BIAS:.*]]: !llvm.ptr, %[[Y:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[M:.*]]: i64, %[[N:.*]]: i64) -> i32
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @qkv_halide
// in_features, out_features, element bytes, DLPack code (kDLBfloat), MatMul weights, the
// item's rows and columns, block rows
// CHECK-DAG: %[[IN:.*]] = llvm.mlir.constant(768 : i64)
// CHECK-DAG: %[[OUT:.*]] = llvm.mlir.constant(2304 : i64)
// CHECK-DAG: %[[E:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[C:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-DAG: %[[ONNX:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-DAG: %[[ITEM_ROWS:.*]] = llvm.mlir.constant(256 : i64)
// CHECK-DAG: %[[ITEM_COLS:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-DAG: %[[ROWS:.*]] = llvm.mlir.constant(6 : i64)
// CHECK: %[[R:.*]] = llvm.call @attnc_rt_halide_projection(%[[FN]], %[[X]], %[[W]], %[[BIAS]], %[[Y]], %[[P]], %[[B]], %[[M]], %[[N]], %[[IN]], %[[OUT]], %[[E]], %[[C]], %[[ONNX]], %[[ITEM_ROWS]], %[[ITEM_COLS]], %[[ROWS]])
// CHECK: llvm.return %[[R]] : i32
// CUDA: error: 'attn.projection' op is built by the Halide backend on CPU targets only, not for device cuda
attn.kernel @qkv {
  attn.projection {in_features = 768, out_features = 2304, dtype = bf16, weights = onnx}
}
