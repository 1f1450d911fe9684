// attn-emit-cpu-entry: each kernel listed in attn.cpu_kernels gets its runtime descriptor
// and exported C entry point (LLVM dialect).
// RUN: attnc-opt %s --split-input-file --attn-emit-cpu-entry='target=x86-64-avx2 cpu-needs=15' --verify-diagnostics | FileCheck %s

// The descriptor's fields in the order of ATTNC_KERNEL_DESC_FIELDS (attnc_runtime.h): ten
// int32, three int64, four pointers, each filled from the fact of the same name (the grid
// function's is null: this kernel has a tile function), the target and its CPU needs from
// the pass options.
// CHECK-LABEL: module
// CHECK-NOT: attn.cpu_kernels
// CHECK: llvm.func @attnc_rt_launch(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.mlir.global private constant @k_name("k\00")
// CHECK: llvm.mlir.global private constant @k_target("x86-64-avx2\00")
// CHECK: llvm.mlir.global internal constant @k_desc() {{.*}} : !llvm.struct<"attnc_kernel_desc", (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i64, i64, i64, ptr, ptr, ptr, ptr)>
// abi_version = ATTNC_ABI_VERSION
// CHECK: %[[F0:[0-9]+]] = llvm.mlir.constant(4 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F0]], %{{[0-9]+}}[0]
// device_type = kDLCPU
// CHECK-NEXT: %[[F1:[0-9]+]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F1]], %{{[0-9]+}}[1]
// num_heads, num_kv_heads, head_dim
// CHECK-NEXT: %[[F2:[0-9]+]] = llvm.mlir.constant(8 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F2]], %{{[0-9]+}}[2]
// CHECK-NEXT: %[[F3:[0-9]+]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F3]], %{{[0-9]+}}[3]
// CHECK-NEXT: %[[F4:[0-9]+]] = llvm.mlir.constant(128 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F4]], %{{[0-9]+}}[4]
// dtype f32: dtype_code = kDLFloat, dtype_bits = 32
// CHECK-NEXT: %[[F5:[0-9]+]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F5]], %{{[0-9]+}}[5]
// CHECK-NEXT: %[[F6:[0-9]+]] = llvm.mlir.constant(32 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F6]], %{{[0-9]+}}[6]
// layout, outputs, block_q
// CHECK-NEXT: %[[F7:[0-9]+]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F7]], %{{[0-9]+}}[7]
// CHECK-NEXT: %[[F8:[0-9]+]] = llvm.mlir.constant(3 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F8]], %{{[0-9]+}}[8]
// CHECK-NEXT: %[[F9:[0-9]+]] = llvm.mlir.constant(16 : i32)
// CHECK-NEXT: llvm.insertvalue %[[F9]], %{{[0-9]+}}[9]
// max_seq_q, max_seq_kv
// CHECK-NEXT: %[[F10:[0-9]+]] = llvm.mlir.constant(4096 : i64)
// CHECK-NEXT: llvm.insertvalue %[[F10]], %{{[0-9]+}}[10]
// CHECK-NEXT: %[[F11:[0-9]+]] = llvm.mlir.constant(8192 : i64)
// CHECK-NEXT: llvm.insertvalue %[[F11]], %{{[0-9]+}}[11]
// cpu_needs (AVX2, FMA, BMI2, F16C)
// CHECK-NEXT: %[[F12:[0-9]+]] = llvm.mlir.constant(15 : i64)
// CHECK-NEXT: llvm.insertvalue %[[F12]], %{{[0-9]+}}[12]
// name, target, tile, grid
// CHECK-NEXT: %[[F13:[0-9]+]] = llvm.mlir.addressof @k_name
// CHECK-NEXT: llvm.insertvalue %[[F13]], %{{[0-9]+}}[13]
// CHECK-NEXT: %[[F14:[0-9]+]] = llvm.mlir.addressof @k_target
// CHECK-NEXT: llvm.insertvalue %[[F14]], %{{[0-9]+}}[14]
// CHECK-NEXT: %[[F15:[0-9]+]] = llvm.mlir.addressof @_mlir_ciface_k_tile
// CHECK-NEXT: llvm.insertvalue %[[F15]], %{{[0-9]+}}[15]
// CHECK-NEXT: %[[F16:[0-9]+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[D:[0-9]+]] = llvm.insertvalue %[[F16]], %{{[0-9]+}}[16]
// CHECK-NEXT: llvm.return %[[D]]
// CHECK: llvm.func @k(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[OPT:.*]]: !llvm.ptr) -> i32
// CHECK: %[[D:.*]] = llvm.mlir.addressof @k_desc
// CHECK: llvm.call @attnc_rt_launch(%[[D]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[OPT]])
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 8192 : i64, max_seq_q = 4096 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// The dtype as DLPack spells it: bf16 is kDLBfloat (4) of 16 bits, f16 kDLFloat (2) of 16.
// Two kernels share the one descriptor type.
// CHECK-LABEL: module
// CHECK: llvm.mlir.global internal constant @b_desc() {{.*}} : !llvm.struct<"attnc_kernel_desc",
// CHECK: llvm.insertvalue {{.*}}[4]
// CHECK-NEXT: llvm.mlir.constant(4 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[5]
// CHECK-NEXT: llvm.mlir.constant(16 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[6]
// CHECK: llvm.mlir.global internal constant @h_desc() {{.*}} : !llvm.struct<"attnc_kernel_desc",
// CHECK: llvm.insertvalue {{.*}}[4]
// CHECK-NEXT: llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[5]
// CHECK-NEXT: llvm.mlir.constant(16 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[6]
module attributes {attn.cpu_kernels = [
    {block_q = 32 : i64, dtype = bf16, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "b", num_heads = 4 : i64, num_kv_heads = 4 : i64, outputs = 1 : i64},
    {block_q = 32 : i64, dtype = f16, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "h", num_heads = 4 : i64, num_kv_heads = 4 : i64, outputs = 1 : i64}]} {
  llvm.func @_mlir_ciface_b_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
  llvm.func @_mlir_ciface_h_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// A grid kernel (the Halide GPU targets): its device_type fact (kDLCUDA) and its grid
// function; the tile function's pointer is null.
// CHECK-LABEL: module
// CHECK: llvm.mlir.global internal constant @g_desc()
// CHECK: llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[1]
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.insertvalue {{.*}}[15]
// CHECK-NEXT: %[[G:[0-9]+]] = llvm.mlir.addressof @_mlir_ciface_g_grid
// CHECK-NEXT: llvm.insertvalue %[[G]], {{.*}}[16]
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, device_type = 2 : i64, dtype = f32, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "g", num_heads = 4 : i64, num_kv_heads = 4 : i64, outputs = 1 : i64}]} {
  llvm.func @_mlir_ciface_g_grid(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'lost' needs one of the functions _mlir_ciface_lost_tile and _mlir_ciface_lost_grid}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "lost", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
}

// -----

// A fact the descriptor needs is missing: an error, never a silent 0.
// expected-error @below {{attn-emit-cpu-entry: kernel 'k': descriptor field 'block_q' has no value in attn.cpu_kernels}}
module attributes {attn.cpu_kernels = [{dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k' has no 'dtype' type in attn.cpu_kernels}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k' has dtype 'f64', which has no DLPack spelling here; expected f32, f16 or bf16}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k': descriptor field 'head_dim' is 4294967296, which does not fit int32}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f32, head_dim = 4294967296 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
