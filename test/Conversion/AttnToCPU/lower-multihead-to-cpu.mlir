// attn-lower-flash-to-cpu on attn.multihead_attention: the body's attn.flash becomes an
// attention tile function of its own, @<name>__flash_tile (no C interface), and the kernel's
// three phases take x, the weights, the biases, out, the scratch q, k, v and attention output
// (f32), params and the item: the QKV projection (nn.Linear weights transposed in registers,
// register blocks of FMAs), the attention (a call of @mha__flash_tile on the scratch, with
// seq_kv = seq in a copy of the params), the output projection. With key_padding = lengths
// the phases take the int32 key_lengths after out, and the attention's seq_kv is
// key_lengths[b] (the param at ATTNC_P_KEY_LENGTHS_STRIDES = 25 its batch stride).
// RUN: attnc-opt %s --attn-lower-flash-to-cpu="target=x86-64-avx2" | FileCheck %s

// CHECK: attn.cpu_kernels = [{block_q = 64 : i64, dtype = f32, embed_dim = 64 : i64, head_dim = 32 : i64, layout = 0 : i64, name = "mha", num_heads = 2 : i64, num_kv_heads = 2 : i64, op = "attn.multihead_attention"}, {block_q = 64 : i64, dtype = f32, embed_dim = 64 : i64, head_dim = 32 : i64, key_lengths, layout = 0 : i64, name = "padded", num_heads = 2 : i64, num_kv_heads = 2 : i64, op = "attn.multihead_attention"}]
// CHECK-LABEL: func.func @mha__flash_tile(
// CHECK-NOT: llvm.emit_c_interface
// CHECK-LABEL: func.func @mha_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xi64>, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index) -> i32 attributes {llvm.emit_c_interface}
// CHECK: vector.shuffle
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: vector.maskedstore
// CHECK-LABEL: func.func @mha_attention_tile(
// CHECK: memref.alloca() : memref<26xi64>
// CHECK: call @mha__flash_tile(
// CHECK-LABEL: func.func @mha_out_tile(
// CHECK: vector.fma %{{.*}} : vector<8xf32>
attn.kernel @mha {
  attn.multihead_attention {embed_dim = 64, dtype = f32, weights = pytorch} {
    attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                mask = #attn.full, scale = 0.17677669529663687, outputs = [out], block_q = 64,
                block_kv = 64}
  }
}

// CHECK-LABEL: func.func @padded_attention_tile(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %[[LENS:[^:]*]]: memref<?xi32>, %{{[^:]*}}: memref<?xf32>,
// CHECK: %[[LOCAL:.*]] = memref.alloca() : memref<26xi64>
// CHECK: memref.store %{{.*}}, %[[LOCAL]][%c25
// CHECK: %[[KEYS:.*]] = memref.load %[[LENS]]
// CHECK: %[[WIDE:.*]] = arith.extsi %[[KEYS]] : i32 to i64
// CHECK: memref.store %[[WIDE]], %[[LOCAL]][%c1
// CHECK: call @padded__flash_tile(
attn.kernel @padded {
  attn.multihead_attention {embed_dim = 64, dtype = f32, weights = pytorch, key_padding = lengths} {
    attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 32, dtype = f32, layout = bshd,
                mask = #attn.full, scale = 0.17677669529663687, outputs = [out], block_q = 64,
                block_kv = 64}
  }
}
