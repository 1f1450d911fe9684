// attn-lower-flash-to-cpu on an attn.flash_backward whose score_mod reads an f32 table:
// the table's gradient d_bias and its per-item shares bias_part join the tile functions'
// arguments (after the inputs, and after dq_part and delta); each (b, g, chunk) item zeroes
// its share; the element pass inlines the score_mod once with a derivative chain per table
// load and records each element's slope and place in the share; after dP, where G = P (dP -
// D) is not 0 (the float compare below), G times the slope is added there (no second read of
// the table); a fourth function over the table's first dim (one coordinate) sums the shares
// into d_bias.
// RUN: attnc-opt %s --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s

// q, k, v, out, lse, d_out, d_lse, dq, dk, dv, bias, d_bias, dq_part, delta, bias_part; params;
// the item.
// CHECK-LABEL: func.func @tables_dkdv_tile(
// CHECK-SAME: %[[DV:[^:]*]]: memref<?xf32>, %[[BIAS:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[SHARE:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> i32
// The item's share: 0.
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[SHARE]][
// The element pass (the score_mod's value and slopes; the records), then the table's pass.
// CHECK: memref.load %[[BIAS]][
// CHECK: memref.store %{{.*}}, %[[PLACES:.*]][%{{.*}}, %{{.*}}] : memref<64x64xindex>
// CHECK: arith.cmpf une
// CHECK-NOT: memref.load %[[BIAS]][
// CHECK: memref.load %[[PLACES]][
// CHECK: %[[OLD:.*]] = memref.load %[[SHARE]][%[[AT:.*]]] : memref<?xf32>
// CHECK: %[[ADD:.*]] = arith.addf %[[OLD]],
// CHECK: memref.store %[[ADD]], %[[SHARE]][%[[AT]]]
// CHECK: memref.store %{{.*}}, %[[DV]][
// CHECK-LABEL: func.func @tables_dq_tile(
// CHECK-LABEL: func.func @tables_d_bias_tile(
// CHECK-SAME: %[[GRAD:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[SHARE2:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %[[ROW:[^:]*]]: index) -> i32
// In item order: batch, KV head, chunk.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[SHARE2]][
// CHECK: memref.store %{{.*}}, %[[GRAD]][
attn.kernel @tables {
  attn.flash_backward {num_heads = 4, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bshd, mask = #attn.full, scale = 0.125, outputs = [dq, dk, dv], inputs = [bias: f32 [heads, 9]], block_q = 64, block_kv = 64, kv_chunks = 2}
  score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
    %lo = arith.constant -4 : index
    %hi = arith.constant 4 : index
    %d = arith.subi %kv, %q : index
    %c = arith.maxsi %d, %lo : index
    %e = arith.minsi %c, %hi : index
    %at = arith.addi %e, %hi : index
    %bias = attn.load @bias[%h, %at] : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
}
