// attn-lower-flash-to-nvgpu on a split-KV decode kernel (num_splits; FlashMmaDecode.cpp): two
// kernels in one gpu.module, the attention phase (CTA per split, KV head, batch; its 64-row
// tile the 4 query heads of a KV head at up to 4 positions, padded) and the merge (CTA per
// head, batch), each launched by its own grid function through attnc_rt_cuda_launch_views
// with every view of the kernel interface. mma.sync on cuda-sm90a too: decode is bound by
// bandwidth, not by the tensor cores.
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu | FileCheck %s
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu=target=cuda-sm90a | FileCheck %s

// A device kernel's item is one KV head.
// CHECK: attn.cpu_kernels = [{{{.*}}device_type = 2 : i64, {{.*}}kv_heads_per_item = 1 : i64, {{.*}}num_splits = 16 : i64, {{.*}}page_size = 16 : i64}]
// q, k, v, out, lse, kv_lens, block_table, o_part, lse_part, then the 26 params.
// CHECK: gpu.func @paged(%{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xf32, 1>, %[[LENS:.*]]: memref<?xi32, 1>, %[[TABLE:.*]]: memref<?xi32, 1>, %[[OPART:.*]]: memref<?xf32, 1>, %[[LSEPART:.*]]: memref<?xf32, 1>, %{{.*}}: index, {{.*}}, %{{.*}}: index) kernel attributes {attn.dynamic_shared_bytes = 87040 : i64, known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK-NOT: nvvm.wgmma
// CHECK: %[[SPLIT:.*]] = gpu.block_id  x
// CHECK: gpu.block_id  y
// CHECK: gpu.block_id  z
// The sequence's length, then its split's tiles; each key row found through the table.
// CHECK: memref.load %[[LENS]]
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy
// CHECK: memref.load %[[TABLE]]
// CHECK: nvgpu.device_async_copy
// CHECK: scf.while
// CHECK: nvvm.mma.sync
// CHECK: math.exp2
// CHECK: nvvm.mma.sync
// The rows' normalized partials and log-sum-exp.
// CHECK: vector.store %{{.*}}, %[[OPART]][%{{.*}}] : memref<?xf32, 1>, vector<2xf32>
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[LSEPART]]
// CHECK: gpu.func @paged_merge({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: %[[HEAD:.*]] = gpu.block_id  x
// CHECK: %[[BATCH:.*]] = gpu.block_id  y
// The splits in order: their largest lse, then the weights and the weighted rows.
// CHECK: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args
// CHECK: arith.maximumf
// CHECK: scf.for
// CHECK: math.exp
// CHECK: math.fma
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: math.log
// CHECK: llvm.mlir.global private constant @paged_image("")
// CHECK: llvm.func @attnc_rt_cuda_launch_views(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i32
// CHECK: llvm.func @_mlir_ciface_paged_grid(%{{.*}}: !llvm.ptr, {{.*}}, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[D:.*]]: i64, %[[S:.*]]: !llvm.ptr) -> i32
// 16 splits x 8 KV heads x batch CTAs of 128 threads, 87040 bytes; bf16; q, k, v copied by cp.async; inputs from view 7, none.
// CHECK-DAG: %[[SPLITS:.*]] = llvm.mlir.constant(16 : i64)
// CHECK-DAG: %[[KVHEADS:.*]] = llvm.mlir.constant(8 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch_views(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]], %[[D]], %[[S]], %[[SPLITS]], %[[KVHEADS]], %[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.mlir.global private constant @paged_merge_cuda_function("paged_merge\00")
// CHECK: llvm.func @_mlir_ciface_paged_merge_grid(%{{.*}}: !llvm.ptr, {{.*}}, %[[P2:.*]]: !llvm.ptr, %[[B2:.*]]: i64, %[[D2:.*]]: i64, %[[S2:.*]]: !llvm.ptr) -> i32
// CHECK-DAG: %[[HEADS:.*]] = llvm.mlir.constant(32 : i64)
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch_views(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P2]], %[[D2]], %[[S2]], %[[HEADS]], %[[B2]], %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
attn.kernel @paged {
  attn.attention {num_heads = 32, num_kv_heads = 8, head_dim = 128, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<bottom_right>, max_seq = [4, 131072], outputs = [out, lse],
                  num_splits = 0, kv_cache = paged<16>}
}

// -----

// A mod's input (ALiBi slopes) after kv_lens and block_table: argument 7, then the scratch,
// then the status word a load outside the input sets; both launches name the input's view.
// CHECK: gpu.func @slopes({{.*}}, %{{.*}}: memref<?xi32, 1>, %{{.*}}: memref<?xi32, 1>, %[[SLOPES:.*]]: memref<?xf32, 1>, %{{.*}}: memref<?xf32, 1>, %{{.*}}: memref<?xf32, 1>, %[[STATUS:.*]]: memref<?xi32, 1>, %{{.*}}: index,
// CHECK: memref.load %[[SLOPES]]
// CHECK: memref.store %{{.*}}, %[[STATUS]]
// CHECK: llvm.func @_mlir_ciface_slopes_grid(
// CHECK-DAG: %[[SEVEN:.*]] = llvm.mlir.constant(7 : i64)
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch_views({{.*}}, %[[SEVEN]], %[[ONE]])
// CHECK: llvm.func @_mlir_ciface_slopes_merge_grid(
attn.kernel @slopes {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bhsd,
                  mask = #attn.causal<bottom_right>, outputs = [out, lse], num_splits = 0,
                  kv_cache = paged<16>, inputs = [slopes: f32 [heads]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %slope = attn.load @slopes[%h] : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.addf %s, %bias : f32
      attn.yield %r : f32
    }
}
