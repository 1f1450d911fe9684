// attn-lower-flash-to-halide-call: each tiled kernel becomes the runtime's tile function,
// forwarding to attnc_rt_halide_tile with its Halide pipeline and constants, and its facts
// land in attn.cpu_kernels for attn-emit-cpu-entry.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call | FileCheck %s
// On a GPU target, the grid function instead: the whole tensors in one call, with Halide's
// CUDA device interface (cuda) or none (opencl: host tensors); device_type joins the facts.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=cuda | FileCheck %s --check-prefix=CUDA
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=opencl | FileCheck %s --check-prefix=OPENCL
// RUN: not attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=tpu 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-NOT: attn.kernel
// CHECK: attn.cpu_kernels = [{block_q = 64 : i64, dtype = bf16, head_dim = 96 : i64, {{.*}}name = "gqa", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]
// The pipeline in Halide's argv form (one pointer to its arguments' addresses).
// CHECK: llvm.func @gqa_halide_argv(!llvm.ptr) -> i32
// CHECK: llvm.func @attnc_rt_halide_tile(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @_mlir_ciface_gqa_tile(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[H:.*]]: i64, %[[T:.*]]: i64) -> i32
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @gqa_halide_argv
// block_q, head_dim, query heads per kv head, element bytes, DLPack code (kDLBfloat)
// CHECK-DAG: %[[BQ:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-DAG: %[[D:.*]] = llvm.mlir.constant(96 : i64)
// CHECK-DAG: %[[G:.*]] = llvm.mlir.constant(4 : i64)
// CHECK-DAG: %[[E:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[C:.*]] = llvm.mlir.constant(4 : i64)
// No mod inputs: no views of them, no table.
// CHECK: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[R:.*]] = llvm.call @attnc_rt_halide_tile(%[[FN]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[P]], %[[B]], %[[H]], %[[T]], %[[BQ]], %[[D]], %{{.*}}, %{{.*}}, %{{.*}}, %[[NONE]], %[[NONE]])
// CHECK: llvm.return %[[R]] : i32
attn.kernel @gqa {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 96, dtype = bf16, layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}

// CUDA: attn.cpu_kernels = [{block_q = 64 : i64, device_type = 2 : i64, dtype = bf16,
// The pipeline in its argv form too (its arguments: the user_context, q, k, v, the mod
// inputs, out, lse when the kernel outputs it, the index check when it has inputs).
// CUDA: llvm.func @gqa_halide_argv(!llvm.ptr) -> i32
// CUDA: llvm.func @attnc_rt_halide_grid(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr) -> i32
// CUDA: llvm.func @halide_cuda_device_interface() -> !llvm.ptr
// CUDA: llvm.func @_mlir_ciface_gqa_grid(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[DEV:.*]]: i64, %[[S:.*]]: !llvm.ptr) -> i32
// CUDA: %[[I:.*]] = llvm.call @halide_cuda_device_interface()
// CUDA: %[[FN:.*]] = llvm.mlir.addressof @gqa_halide_argv
// heads, kv heads, head_dim, element bytes, DLPack code (kDLBfloat), lse
// CUDA-DAG: %[[H:.*]] = llvm.mlir.constant(8 : i64)
// CUDA-DAG: %[[KV:.*]] = llvm.mlir.constant(2 : i64)
// CUDA-DAG: %[[D:.*]] = llvm.mlir.constant(96 : i64)
// CUDA-DAG: %[[LSE:.*]] = llvm.mlir.constant(1 : i64)
// No mod inputs: no views of them, no table.
// CUDA: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CUDA: llvm.call @attnc_rt_halide_grid(%[[FN]], %[[I]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[P]], %[[B]], %[[DEV]], %[[S]], %[[H]], %[[KV]], %[[D]], %{{.*}}, %{{.*}}, %[[LSE]], %[[NONE]], %[[NONE]])

// The OpenCL kernel takes host tensors: its entry names no device (kDLCPU), yet it has a
// grid function, not a tile function.
// OPENCL-NOT: device_type
// OPENCL-NOT: halide_cuda_device_interface
// OPENCL: llvm.func @_mlir_ciface_gqa_grid(
// OPENCL: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// OPENCL: llvm.call @attnc_rt_halide_grid(%{{.*}}, %[[NONE]],

// BAD: attn-lower-flash-to-halide-call: device 'tpu' is none of cpu, cuda and opencl
