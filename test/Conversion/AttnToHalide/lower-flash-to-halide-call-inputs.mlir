// attn-lower-flash-to-halide-call with mod inputs: the tile function takes their views after
// the outputs, hands them to attnc_rt_halide_tile as an array on the stack, with a table of
// their shapes: (count, the param of the first stride, then per input its DLPack code, rank
// and per dim (param, scale, offset)). Params: 17 batch, 1 seq_kv; -1: a fixed extent.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call | FileCheck %s
// On a GPU device the grid function takes them the same way, after lse.
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash --attn-lower-flash-to-halide-call=device=cuda | FileCheck %s --check-prefix=CUDA

// CHECK: llvm.func @_mlir_ciface_docs_tile(%[[Q:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[IDS:.*]]: !llvm.ptr, %[[CAP:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64) -> i32
// CHECK: %[[ARRAY:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: %[[AT0:.*]] = llvm.getelementptr %[[ARRAY]][0]
// CHECK: llvm.store %[[IDS]], %[[AT0]]
// CHECK: %[[AT1:.*]] = llvm.getelementptr %[[ARRAY]][1]
// CHECK: llvm.store %[[CAP]], %[[AT1]]
// CHECK: %[[TABLE:.*]] = llvm.mlir.addressof @docs_inputs
// CHECK: llvm.call @attnc_rt_halide_tile({{.*}}, %[[P]], {{.*}}, %[[ARRAY]], %[[TABLE]])
// document_id: i32 (kDLInt 0) [batch, seq_kv]; cap: f32 (kDLFloat 2) [heads] (8, fixed).
// CHECK: llvm.mlir.global private constant @docs_inputs(dense<[2, 18, 0, 2, 17, 1, 0, 1, 1, 0, 2, 1, -1, 0, 8]> : tensor<15xi64>)
attn.kernel @docs {
  attn.attention {num_heads = 8, num_kv_heads = 2, head_dim = 64, dtype = f32, layout = bhsd,
                  mask = #attn.full, outputs = [out],
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

// CUDA: llvm.func @_mlir_ciface_docs_grid(%[[Q:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[IDS:.*]]: !llvm.ptr, %[[CAP:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[DEV:.*]]: i64, %[[S:.*]]: !llvm.ptr) -> i32
// CUDA: %[[ARRAY:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CUDA: llvm.store %[[IDS]],
// CUDA: llvm.store %[[CAP]],
// CUDA: %[[TABLE:.*]] = llvm.mlir.addressof @docs_inputs
// CUDA: llvm.call @attnc_rt_halide_grid({{.*}}, %[[P]], %[[B]], %[[DEV]], %[[S]], {{.*}}, %[[ARRAY]], %[[TABLE]])
// CUDA: llvm.mlir.global private constant @docs_inputs(dense<[2, 18, 0, 2, 17, 1, 0, 1, 1, 0, 2, 1, -1, 0, 8]> : tensor<15xi64>)
