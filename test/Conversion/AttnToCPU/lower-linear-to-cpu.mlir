// attn-lower-flash-to-cpu on attn.linear_attention: a causal kernel with state = carry is
// one tile function over (b, g) taking q, k, v, out, the initial and final state and
// normalizer, params and the item; its chunk's scores are register blocks of FMAs on vectors
// of keys, each row's later keys set to 0 by a lane compare (key <= row), and elu + 1 is
// 2^x on vectors below 0. A non-causal kernel has two: the state over (b, g), into its
// scratch, and the rows over (b, h, q_tile). The entry records the family's facts.
// RUN: attnc-opt %s --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s

// CHECK: attn.cpu_kernels = [{carry_state, causal, dtype = f32, head_dim = 16 : i64, layout = 0 : i64, name = "causal", num_heads = 2 : i64, num_kv_heads = 2 : i64, op = "attn.linear_attention", value_dim = 16 : i64}, {dtype = bf16, head_dim = 16 : i64, layout = 0 : i64, name = "full", {{.*}}op = "attn.linear_attention"
// CHECK-LABEL: func.func @causal_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[S0:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[S:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index) -> i32
// The initial state when given (a NULL one is an empty view).
// CHECK: memref.dim %[[S0]]
// CHECK: vector.load %[[S0]]
// elu + 1 of the keys.
// CHECK: arith.minimumf %{{.*}} : vector<8xf32>
// CHECK: arith.cmpf ogt, %{{.*}} : vector<8xf32>
// Scores, then the causal mask on them.
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: arith.cmpi sle, %{{.*}} : vector<8xi32>
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
// The final state, after the chunks.
// CHECK: memref.store %{{.*}}, %[[S]][
// CHECK: return
// CHECK-LABEL: func.func @full_tile(
// CHECK-SAME: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xbf16>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index) -> i32
// CHECK: arith.maximumf %{{.*}} : vector<8xf32>
// CHECK-NOT: arith.cmpi sle
// CHECK-LABEL: func.func @full_attention_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index) -> i32
attn.kernel @causal {
  attn.linear_attention {num_heads = 2, head_dim = 16, dtype = f32, layout = bhsd,
                         feature_map = elu1, causal = true, chunk = 32, state = carry}
}
attn.kernel @full {
  attn.linear_attention {num_heads = 2, head_dim = 16, dtype = bf16, layout = bhsd,
                         feature_map = relu}
}
