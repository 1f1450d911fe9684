// attn-lower-flash-to-cpu: each f32 attn.flash becomes its C-interface tile function, with
// the vector width and Q K^T register block of the CPU target description.
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu --verify-diagnostics | FileCheck %s
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu="target=x86-64-avx2 count-tiles=1" --verify-diagnostics | FileCheck %s --check-prefix=AVX2
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu="target=x86-64-avx512-bf16" --verify-diagnostics | FileCheck %s --check-prefix=BF16DOT
// RUN: attnc-opt %s --split-input-file --attn-lower-flash-to-cpu --verify-diagnostics | FileCheck %s --check-prefix=BF16WIDE

// The descriptor facts go to a module attribute; the kernel op is gone.
// CHECK: module attributes {attn.cpu_kernels = [{block_q = 64 : i64, dtype = f32, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "causal", num_heads = 4 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]}
// CHECK-NOT: attn.kernel
// CHECK-LABEL: func.func @causal_tile(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xi64>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) -> i32 attributes {llvm.emit_c_interface}
// GQA: key/value head = head / (4 / 2).
// CHECK: arith.divui %{{.*}}, %c2
// Per-tile buffers live on the stack: Q^T, S^T, acc (64 x 64); m, l, alpha. V is read in
// place.
// CHECK-COUNT-3: memref.alloca() : memref<64x64xf32>
// CHECK-COUNT-3: memref.alloca() : memref<64xf32>
// Q^T: whole 16 x 16 blocks of q are transposed in registers, 4 rounds of 16 shuffles.
// CHECK-COUNT-64: vector.shuffle
// The KV tiles are walked visited tile by visited tile: a scan classifies each tile by index
// arithmetic on its bounds (causal = window<inf, 0>: full when the last query row reaches
// the tile's last key; empty when the first key lies past it) and skips the empty ones.
// CHECK: %[[NUMKV:.*]] = arith.ceildivsi
// CHECK: scf.while
// CHECK: arith.cmpi slt, %{{.*}}, %[[NUMKV]]
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// The walk computes the next visited tile before the current one, and prefetches its k and v
// rows (4 lines each at head_dim 64) while Q K^T runs.
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: scf.while
// CHECK: scf.if
// CHECK-COUNT-8: memref.prefetch
// Scores S^T: a key of k broadcast, FMA with 16 query rows of Q^T; a register block of
// 4 keys x 4 vectors (16 accumulators).
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: vector.fma %{{.*}} : vector<16xf32>
// Partial and edge tiles run the per-element pass with the mask inlined.
// CHECK: scf.if
// Online softmax over 16 rows at once: a plain running max (x > y ? x : y, one vmaxps) in
// 4 independent chains, 2^x of the shifted scores specialised for x <= 0 (a clamp that keeps
// NaN, round, polynomial, vscalefps by 2^n on AVX-512; exponent bits on AVX2), sums. The
// clamp at -125 keeps vscalefps's results normal floats (a subnormal or underflowing one
// costs an FP assist on Intel cores); the lanes below it are 0 after.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: arith.cmpf ogt, %{{.*}} : vector<16xf32>
// CHECK-NEXT: arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: %[[LO:.*]] = arith.constant dense<-1.250000e+02> : vector<16xf32>
// CHECK-NEXT: %[[BELOW:.*]] = arith.cmpf ogt, %[[LO]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: arith.select %[[BELOW]], %[[LO]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: math.roundeven %{{.*}} : vector<16xf32>
// CHECK: %[[SCALED:.*]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"
// CHECK: arith.select %[[BELOW]], %{{.*}}, %[[SCALED]] : vector<16xi1>, vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK-NOT: math.exp %{{.*}} : vector<16xf32>
// P V register-blocked too: 4 query rows x 4 vectors of head_dim (16 accumulators) over
// the keys of the tile, V loaded in place, P broadcast.
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.load %arg2
// CHECK: vector.broadcast
// CHECK: vector.fma
// Output: out = acc / l, lse = m + log l, fully masked rows 0 / -inf.
// CHECK: math.log
// CHECK: return
// On AVX2 (8 lanes, 16 ymm registers): a block of 2 keys x 4 vectors (8 accumulators); the
// count-tiles instrumentation adds the counter.
// AVX2: memref.global "public" @causal_tiles_visited : memref<1xi64> = dense<0>
// AVX2: memref.atomic_rmw addi
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: vector.fma %{{.*}} : vector<8xf32>
// AVX2: arith.shli %{{.*}} : vector<8xi32>
// AVX2-NOT: scalef
// CHECK-NOT: tiles_visited
attn.kernel @causal {
  attn.flash {num_heads = 4, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
              mask = #attn.sliding_window<left = inf, right = 0>, scale = 0.125,
              outputs = [out, lse], block_q = 64, block_kv = 64}
}

// -----
// The lowering states its precondition: kernels must be tiled first.
attn.kernel @raw {
  // expected-error @above {{expects its tiled form, attn.flash; run attn-tile-flash first}}
  attn.attention {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.full, scale = 0.125, outputs = [out]}
}

// -----
// A KV tile must fill whole vectors.
attn.kernel @ragged {
  // expected-error @below {{block_kv (20) must be a multiple of the CPU target's vector width}}
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
              mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 20}
}

// -----

// score_mod and mask_mod are inlined into the per-element pass; integer divisions in them
// are guarded (a zero divisor sets the status instead of trapping).
// CHECK-LABEL: func.func @mods_tile
// CHECK: math.tanh
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: memref.store %c1_i32
// CHECK: arith.select
// CHECK: arith.divui
attn.kernel @mods {
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
              mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %t = math.tanh %s : f32
      attn.yield %t : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %d = arith.divui %q, %h : index
      %keep = arith.cmpi ule, %d, %kv : index
      attn.yield %keep : i1
    }
}

// -----

// A mask_mod the interval analysis follows (512-token documents): the scan for visited KV
// tiles also evaluates the body over each tile's ranges (MaskModIntervalsEmit.cpp): the
// bounds of q and kv divided by 512, guarded by the lengths the compile-time proof covers
// (2^40) and the batch and head indices (2^31); the per-element pass remains for the tiles
// it leaves undecided (test/Target/CPU/tile-skipping.test counts the tiles visited).
// CHECK-LABEL: func.func @docs_tile
// CHECK: scf.while
// CHECK: arith.divsi %{{.*}}, %c512
// CHECK: arith.divsi %{{.*}}, %c512
// CHECK: arith.constant 1099511627776 : index
// CHECK: arith.constant 2147483648 : index
attn.kernel @docs {
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
              mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
    mask_mod {
    ^bb0(%b: index, %h: index, %q: index, %kv: index):
      %len = arith.constant 512 : index
      %dq = arith.divui %q, %len : index
      %dk = arith.divui %kv, %len : index
      %keep = arith.cmpi eq, %dq, %dk : index
      attn.yield %keep : i1
    }
}

// -----

attn.kernel @half {
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = f16, layout = bhsd,
              mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
}

// -----
// bf16 on a target with AVX512-BF16: Q K^T and P V as vdpbf16ps on bf16 pairs. q is
// packed in d pairs once (16 x 16 blocks of 32-bit words transposed in registers), v in
// key pairs per visited tile, P rounded to bf16 and interleaved after the softmax.
// BF16DOT-LABEL: func.func @brain_tile(
// BF16DOT-SAME: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xf32>
// BF16DOT: vector.bitcast %{{.*}} : vector<32xbf16> to vector<16xi32>
// BF16DOT-COUNT-64: vector.shuffle
// BF16DOT: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// BF16DOT: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16DOT: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// BF16DOT: x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16DOT: arith.truncf %{{.*}} : f32 to bf16
// Without AVX512-BF16 (x86-64-avx512): k and v rows widened to f32 once per visited tile,
// then the f32 kernel; out rounded to bf16 by integer arithmetic (no libgcc call).
// BF16WIDE-LABEL: func.func @brain_tile(
// BF16WIDE: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// BF16WIDE: vector.fma
// BF16WIDE-NOT: x86vector
// BF16WIDE: arith.shrui
// BF16WIDE: arith.bitcast %{{.*}} : i16 to bf16
attn.kernel @brain {
  attn.flash {num_heads = 2, num_kv_heads = 2, head_dim = 64, dtype = bf16, layout = bhsd,
              mask = #attn.full, scale = 0.125, outputs = [out], block_q = 64, block_kv = 64}
}
