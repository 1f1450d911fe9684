// attn-lower-flash-to-cpu on an attn.flash_backward: its three tile functions
// (BackwardKernel.cpp): a (b, h, q_tile) item writing its rows' D = rowsum(d_out * out), a
// (b, g, chunk) item computing dk, dv and the chunk's dq partial over the KV tiles chunk,
// chunk + kv_chunks, ..., and a (b, h, q_tile) item summing the partials into dq; the entry
// records kv_chunks for the kernel interface.
// RUN: attnc-opt %s --attn-lower-flash-to-cpu | FileCheck %s
// RUN: attnc-opt %s --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s --check-prefix=AVX2

// CHECK: module attributes {attn.cpu_kernels = [{block_q = 64 : i64, dtype = bf16, head_dim = 72 : i64, kv_chunks = 3 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "grads", num_heads = 4 : i64, num_kv_heads = 2 : i64, op = "attn.flash_backward"}]}
// q, k, v, out, lse, d_out, d_lse, dq, dk, dv, the scratch dq_part and delta; params; the item.
// D = rowsum(d_out * out), less d_lse where d_lse is not NULL (an empty view).
// CHECK-LABEL: func.func @grads_tile(
// CHECK-SAME: memref<?xbf16>, %[[DLSE:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xf32>, %[[DELTA:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> i32 attributes {llvm.emit_c_interface}
// CHECK: %[[SIZE:.*]] = memref.dim %[[DLSE]], %{{.*}} : memref<?xf32>
// CHECK: %[[HAS:.*]] = arith.cmpi sgt, %[[SIZE]],
// CHECK: %[[D:.*]] = vector.reduction <add>
// CHECK: scf.if %[[HAS]] -> (f32)
// CHECK: memref.load %[[DLSE]][
// CHECK: arith.subf %[[D]],
// CHECK: memref.store %{{.*}}, %[[DELTA]][
// CHECK: return
// CHECK-LABEL: func.func @grads_dkdv_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %[[LSE:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xbf16>, %[[DK:[^:]*]]: memref<?xbf16>, %[[DV:[^:]*]]: memref<?xbf16>, %[[PART:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index, %[[CHUNK:[^:]*]]: index) -> i32 attributes {llvm.emit_c_interface}
// The tile buffers, f32, cache-line aligned, head_dim padded to whole vectors (72 -> 80).
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x80xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<72x64xf32>
// The item's KV tiles: from its chunk, in steps of kv_chunks.
// CHECK: %[[STEP:.*]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %[[CHUNK]] to %{{.*}} step %[[STEP]]
// Rows end at head_dim: the last vector of a row is a masked load.
// CHECK: vector.maskedload
// A pair's forward lse (-inf: a row that keeps nothing, P = 0).
// CHECK: memref.load %[[LSE]][
// Scores in 4 rows x 4 vectors of keys, then P: 2^(s scale log2(e) - lse log2(e)), and in a
// partial tile 0 where the causal mask drops the pair (on vectors of keys: no element pass).
// CHECK-COUNT-16: vector.fma
// CHECK: arith.cmpi slt, %{{.*}} : vector<16xindex>
// CHECK-NOT: math.exp2
// The chunk's dq partial += dS K, masked where head_dim ends.
// CHECK: vector.maskedstore %[[PART]][
// dk (scaled) and dv rows, rounded to bf16, once per KV tile.
// CHECK: memref.store %{{.*}}, %[[DK]][
// CHECK: memref.store %{{.*}}, %[[DV]][
// CHECK: return
// CHECK-LABEL: func.func @grads_dq_tile(
// The partials of the 3 chunks, added in order.
// CHECK-COUNT-3: vector.maskedload %[[PART2:.*]][
// CHECK: return
// CHECK-NOT: attn.kernel
// On AVX2, 8 lanes and register blocks of 6 rows x 2 vectors (the P V block of the forward).
// AVX2-LABEL: func.func @grads_dkdv_tile(
// AVX2: memref.alloca() {alignment = 64 : i64} : memref<64x72xf32>
// AVX2-COUNT-12: vector.fma %{{.*}} : vector<8xf32>
attn.kernel @grads {
  attn.flash_backward {num_heads = 4, num_kv_heads = 2, head_dim = 72, dtype = bf16, layout = bhsd, mask = #attn.sliding_window<left = inf, right = 0>, scale = 0.125, outputs = [dq, dk, dv], block_q = 64, block_kv = 64, kv_chunks = 3}
}
