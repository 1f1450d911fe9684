// attn-lower-flash-to-nvgpu: each tiled kernel becomes a gpu.module with its mma.sync kernel
// and the runtime's grid function, which hands the kernel image and launch facts to
// attnc_rt_cuda_launch; the facts land in attn.cpu_kernels with device_type kDLCUDA (2).
// RUN: attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash --attn-lower-flash-to-nvgpu | FileCheck %s
// RUN: not attnc-opt %s --split-input-file --attn-normalize --attn-tile-flash=block-kv=24 --attn-lower-flash-to-nvgpu 2>&1 | FileCheck %s --check-prefix=BLOCK

// CHECK: module attributes {attn.cpu_kernels = [{block_q = 64 : i64, device_type = 2 : i64, dtype = bf16, head_dim = 96 : i64, {{.*}}name = "gqa", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}], gpu.container_module}
// CHECK: gpu.module @gqa_gpu
// q, k, v, out, lse as the runtime's flat views, then the 17 params.
// CHECK: gpu.func @gqa(%{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xbf16, 1>, %{{.*}}: memref<?xf32, 1>, %{{.*}}: index, {{.*}}: index) kernel attributes {attn.dynamic_shared_bytes = 66560 : i64, known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 1 : i32}
// The query tile and two stages of K and V: (64 + 4 x 64) rows of 96 + 8 elements.
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<320x104xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: gpu.barrier
// Q's fragments, loaded once (6 k-chunks of 16 columns).
// CHECK-COUNT-6: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: scf.while
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: gpu.shuffle  xor
// CHECK: math.exp2
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: math.log
// CHECK: llvm.mlir.global private constant @gqa_image("") {addr_space = 0 : i32, alignment = 64 : i64}
// CHECK: llvm.mlir.global private constant @gqa_cuda_function("gqa\00")
// CHECK: llvm.func @_mlir_ciface_gqa_grid(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[D:.*]]: i64, %[[S:.*]]: !llvm.ptr) -> i32
// CHECK-DAG: %[[IMAGE:.*]] = llvm.mlir.addressof @gqa_image
// CHECK-DAG: %[[NAME:.*]] = llvm.mlir.addressof @gqa_cuda_function
// heads, element bytes, block_q, threads, shared bytes
// CHECK-DAG: %[[H:.*]] = llvm.mlir.constant(8 : i64)
// CHECK-DAG: %[[E:.*]] = llvm.mlir.constant(2 : i64)
// CHECK-DAG: %[[BQ:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-DAG: %[[T:.*]] = llvm.mlir.constant(128 : i64)
// CHECK-DAG: %[[SM:.*]] = llvm.mlir.constant(66560 : i64)
// No mod inputs: a null array of them, and a count of 0.
// CHECK: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch(%[[IMAGE]], %[[NAME]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[P]], %[[B]], %[[D]], %[[S]], %[[H]], %[[E]], %[[BQ]], %[[T]], %[[SM]], %[[NONE]], %[[ZERO]])
// BLOCK: error: 'attn.flash' op cannot become a cuda-sm80 tensor-core kernel: block_kv must be a multiple of 16 up to 256 (the MMA's k = 16)
attn.kernel @gqa {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 96, dtype = bf16, layout = bshd, mask = #attn.causal<bottom_right>, outputs = [out, lse]}
}

// -----

// f16 runs on the same MMA shape; a score_mod is inlined into the element pass, and
// head_dim 72 is padded to 80 in shared memory (the MMA's k is 16).
// CHECK: gpu.func @softcap
// CHECK: memref.view {{.*}} to memref<320x88xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: math.tanh
attn.kernel @softcap {
  attn.attention {num_heads = 2, head_dim = 72, dtype = f16, layout = bhsd, mask = #attn.full, outputs = [out]}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %cap = arith.constant 30.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %y = arith.mulf %t, %cap : f32
    attn.yield %y : f32
  }
}

// -----

// Mod inputs: after lse, each input (i32 or f32) and the status word, then 17 + 1 + 3 params
// (batch, then a stride per input dim). A load is branch-free: its index clamped to 0 outside
// the input, and the code naming the input (16 + argument 5 or 6) stored in the status word
// where one was outside: per accumulator for the mask_mod, whose keep bits are a loop (an i32
// word carried) so that few loads are in flight at once, per tile for the score_mod. The grid
// function hands the inputs to the launcher as an array on the stack, with their count.
// CHECK: gpu.func @docs(%{{.*}}: memref<?xf16, 1>, %{{.*}}: memref<?xf16, 1>, %{{.*}}: memref<?xf16, 1>, %{{.*}}: memref<?xf16, 1>, %{{.*}}: memref<?xf32, 1>, %[[IDS:.*]]: memref<?xi32, 1>, %[[CAP:.*]]: memref<?xf32, 1>, %[[STATUS:.*]]: memref<?xi32, 1>, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index) kernel
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (i32)
// CHECK: memref.load %[[IDS]]
// CHECK-NEXT: arith.constant 21 : i32
// CHECK: memref.store %{{.*}}, %[[STATUS]]
// CHECK: scf.yield %{{.*}} : i32
// CHECK: memref.load %[[CAP]]
// CHECK-NEXT: arith.constant 22 : i32
// CHECK: memref.store %{{.*}}, %[[STATUS]]
// CHECK: llvm.func @_mlir_ciface_docs_grid(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[GIDS:.*]]: !llvm.ptr, %[[GCAP:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr) -> i32
// CHECK: %[[ARRAY:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: llvm.store %[[GIDS]],
// CHECK: llvm.store %[[GCAP]],
// CHECK: %[[COUNT:.*]] = llvm.mlir.constant(2 : i64)
// CHECK: llvm.call @attnc_rt_cuda_launch({{.*}}, %[[ARRAY]], %[[COUNT]])
attn.kernel @docs {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f16, layout = bhsd,
                  mask = #attn.causal<top_left>, outputs = [out, lse],
                  inputs = [document_id: i32 [batch, seq_kv], cap: f32 [heads]]}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %c = attn.load @cap[%h] : f32
      %x = arith.divf %s, %c : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %c : f32
      attn.yield %y : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %dq = attn.load @document_id[%b, %q] : i32
      %dk = attn.load @document_id[%b, %kv] : i32
      %same = arith.cmpi eq, %dq, %dk : i32
      attn.yield %same : i1
    }
}
