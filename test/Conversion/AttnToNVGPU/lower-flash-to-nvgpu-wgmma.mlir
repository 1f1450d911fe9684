// attn-lower-flash-to-nvgpu{target=cuda-sm90a}: the Hopper kernel. One warpgroup per 64 query
// rows; the q, k, v tensor maps lead the arguments; tiles arrive by TMA under mbarriers; Q K^T
// on wgmma with both operands in shared memory, P V on wgmma with P in registers (inline PTX);
// the grid function calls the TMA launcher with kv_heads, head_dim and block_kv as well.
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash=block-q=128 --attn-lower-flash-to-nvgpu=target=cuda-sm90a | FileCheck %s
// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash=block-q=32 --attn-lower-flash-to-nvgpu=target=cuda-sm90a 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu=target=cuda-sm70 2>&1 | FileCheck %s --check-prefix=TARGET

// CHECK: module attributes {attn.cpu_kernels = [{block_q = 128 : i64, device_type = 2 : i64, dtype = bf16, head_dim = 96 : i64, {{.*}}name = "gqa", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}], gpu.container_module}
// CHECK: gpu.module @gqa_gpu
// The dynamic shared memory, aligned for the 128-byte swizzle's 1024-byte atoms.
// CHECK: llvm.mlir.global external @attnc_shared() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @gqa(%[[QMAP:.*]]: !llvm.ptr, %[[KMAP:.*]]: !llvm.ptr, %[[VMAP:.*]]: !llvm.ptr, %{{.*}}: memref<?xbf16, 1>, {{.*}}) kernel attributes {attn.dynamic_shared_bytes = 98328 : i64, attn.tensor_map_args = 3 : i64, known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 1 : i32}
// Three mbarriers (Q, KV stages 0 and 1) after the query tile (128 rows x 128 padded columns)
// and four KV tiles (64 x 128): 32768 + 4 x 16384 bytes.
// CHECK-COUNT-3: nvvm.mbarrier.init
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// The query tile: head_dim 96 padded to two 64-column boxes, 32768 bytes expected.
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], {{.*}} {isCTAOnly = true}
// The first KV tile into stage 0, K then V, 2 x 16384 bytes.
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]]
// CHECK: nvvm.mbarrier.try_wait.parity
// The walk: wait for the stage, barrier, then the next tile's loads.
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]]
// S = Q K^T: 6 k16 steps over head_dim 96, block_kv 64 keys, accumulators zeroed by the first.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-5: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.inline_asm has_side_effects "", "=f,
// CHECK: math.exp2
// O += P V: 4 k16 steps over the 64 keys, N = 128 (head_dim padded), V transposed.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;\0A}"
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.yield
// CHECK: math.log
// CHECK: llvm.func @attnc_rt_cuda_launch_tma(
// CHECK: llvm.func @_mlir_ciface_gqa_grid(
// heads, kv_heads, head_dim, block_kv, block_q, threads, shared bytes
// CHECK-DAG: %[[H:.*]] = llvm.mlir.constant(8 : i64)
// CHECK-DAG: %[[KVH:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[D:.*]] = llvm.mlir.constant(96 : i64)
// CHECK-DAG: %[[BKV:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-DAG: %[[BQ:.*]] = llvm.mlir.constant(128 : i64)
// CHECK-DAG: %[[T:.*]] = llvm.mlir.constant(256 : i64)
// CHECK-DAG: %[[SM:.*]] = llvm.mlir.constant(98328 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch_tma({{.*}}, %[[H]], %[[KVH]], %[[D]], %[[BKV]], %[[BQ]], %[[T]], %[[SM]], %{{.*}}, %{{.*}})
// BLOCK: error: 'attn.flash' op cannot become a cuda-sm90a tensor-core kernel: block_q must be a multiple of 64 up to 256 (one warpgroup per 64 query rows)
// TARGET: error: attn-lower-flash-to-nvgpu: unknown target 'cuda-sm70'; expected cuda-sm80 or cuda-sm90a
attn.kernel @gqa {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 96, dtype = bf16, layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}

// -----

// f16 and a score_mod; head_dim 256 (four 64-column boxes) with the tiles in 227 KiB.
// CHECK: gpu.func @softcap
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK: math.tanh
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
attn.kernel @softcap {
  attn.attention {num_heads = 2, head_dim = 256, dtype = f16, layout = bhsd, mask = #attn.full, outputs = [out]} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  }
}
