// attn-lower-flash-to-cpu on an attn.flash with num_splits: the split-KV decode kernel's two
// tile functions (DecodeKernel.cpp), a (b, g, split) item writing the scratch partials and a
// (b, h) merge; the entry records num_splits and seq_q's bound for the kernel interface.
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu --verify-diagnostics | FileCheck %s
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu="target=x86-64-avx512-bf16" | FileCheck %s --check-prefix=BF16DOT
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s --check-prefix=AVX2

// CHECK: module attributes {attn.cpu_kernels = [{block_q = 64 : i64, dtype = f32, head_dim = 64 : i64, kv_heads_per_item = 1 : i64, layout = 0 : i64, max_seq_kv = 65536 : i64, max_seq_q = 4 : i64, name = "decode", num_heads = 8 : i64, num_kv_heads = 2 : i64, num_splits = 3 : i64, op = "attn.flash", outputs = 3 : i64}]}
// q, k, v, out, lse, then the scratch o_part and lse_part; params; (b, g, split).
// CHECK-LABEL: func.func @decode_tile(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %[[K:.*]]: memref<?xf32>, %[[V:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[OPART:.*]]: memref<?xf32>, %[[LSEPART:.*]]: memref<?xf32>, %{{.*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> i32 attributes {llvm.emit_c_interface}
// The packed rows (4 query heads per KV head x max seq_q 4) on a cache-line aligned stack.
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// Scores in register blocks of 4 rows x 4 keys: per head_dim vector, 4 query vectors (from
// the stack) and 4 key vectors (from k) make 16 products, one accumulator per score, whose
// lanes shuffles then sum; the next tile's k lines are prefetched into L2 meanwhile.
// CHECK: memref.prefetch %[[K]][%{{.*}}], read, locality<2>, data
// CHECK-COUNT-4: vector.load %{{.*}} : memref<16x64xf32>, vector<16xf32>
// CHECK-COUNT-4: vector.load %[[K]][%{{.*}}] : memref<?xf32>, vector<16xf32>
// CHECK-COUNT-16: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-COUNT-4: vector.load %{{.*}} : memref<16x64xf32>, vector<16xf32>
// CHECK-COUNT-4: vector.load %[[K]][%{{.*}}] : memref<?xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.fma
// CHECK: vector.shuffle
// P V in blocks of 4 rows x 4 head_dim vectors (head_dim 64: whole rows), 16 accumulators
// over the tile's keys, the next tile's v lines prefetched.
// CHECK: %{{.*}}:16 = scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>,
// CHECK: memref.prefetch %[[V]][%{{.*}}], read, locality<2>, data
// CHECK-COUNT-4: vector.load %[[V]][%{{.*}}] : memref<?xf32>, vector<16xf32>
// CHECK-COUNT-16: vector.fma
// CHECK: memref.store %{{.*}}, %[[OPART]][
// CHECK: memref.store %{{.*}}, %[[LSEPART]][
// CHECK: return
// The merge over (b, h): a weight exp(lse_s - max) per split.
// CHECK-LABEL: func.func @decode_merge_tile(
// CHECK-SAME: %{{.*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index) -> i32 attributes {llvm.emit_c_interface}
// CHECK-COUNT-3: math.exp
// CHECK-NOT: math.exp
// CHECK: math.log
// CHECK-NOT: attn.kernel
attn.kernel @decode {
  attn.flash {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.sliding_window<left = inf, right = 0, align = bottom_right>, scale = 0.125, max_seq = [4, 65536], outputs = [out, lse], num_splits = 3, block_q = 64, block_kv = 64}
}

// -----

// bf16 on AVX512-BF16: scores by vdpbf16ps on q and k as stored, v converted as P V loads it,
// no widened tile (no arith.extf of a whole tile into a stack buffer). On AVX2 k and v are
// read in place too, each vector converted as it is loaded, and no x86vector op appears.
// BF16DOT-LABEL: func.func @decode_bf16_tile(
// BF16DOT-NOT: memref<4096xf32>
// BF16DOT: x86vector.avx512.dot
// BF16DOT: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// BF16DOT-LABEL: func.func @decode_bf16_merge_tile(
// AVX2-LABEL: func.func @decode_bf16_tile(
// AVX2-NOT: x86vector
// AVX2-NOT: memref<4096xf32>
// AVX2: %[[KV:.*]] = vector.load %arg1[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// AVX2-NEXT: arith.extf %[[KV]] : vector<8xbf16> to vector<8xf32>
// AVX2-NOT: x86vector
// AVX2-NOT: memref<4096xf32>
// AVX2-LABEL: func.func @decode_bf16_merge_tile(
attn.kernel @decode_bf16 {
  attn.flash {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bhsd, mask = #attn.full, scale = 0.125, outputs = [out], num_splits = 0, block_q = 64, block_kv = 64}
}

// -----

// kv_cache = paged<16>: kv_lens and block_table (int32) follow lse; the item's KV length is
// kv_lens[b], and each key's row is found through block_table[b, key / 16] at key % 16.
// Pages hold a key's heads side by side: an item computes both KV heads (kv_heads_per_item),
// one head's rows after the other over each tile.
// CHECK: {{.*}}kv_heads_per_item = 2 : i64{{.*}}name = "paged"{{.*}}page_size = 16 : i64
// CHECK-LABEL: func.func @paged_tile(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %[[PK:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[LENS:.*]]: memref<?xi32>, %[[TABLE:.*]]: memref<?xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> i32
// CHECK: memref.load %[[LENS]][
// CHECK: memref.load %[[TABLE]][
// CHECK-NEXT: arith.index_cast
// CHECK: arith.remui %{{.*}}, %c16{{.*}} : index
// CHECK: memref.prefetch %[[PK]][
// CHECK-LABEL: func.func @paged_merge_tile(
// CHECK-SAME: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index) -> i32
attn.kernel @paged {
  attn.flash {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.full, scale = 0.125, max_seq = [4, 65536], outputs = [out, lse], num_splits = 3, kv_cache = paged<16>, block_q = 64, block_kv = 64}
}
