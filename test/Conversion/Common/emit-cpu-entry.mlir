// attn-emit-cpu-entry: each kernel listed in attn.cpu_kernels gets its runtime descriptor
// (kernel interface v2: symbol, tensor and phase tables), its phase function, its exported
// C entry point and the exported function that returns its descriptor (LLVM dialect).
// RUN: attnc-opt %s --split-input-file --attn-emit-cpu-entry='target=x86-64-avx2 cpu-needs=15' --verify-diagnostics | FileCheck %s

// The tables' strings, one global per distinct text.
// CHECK-LABEL: module
// CHECK-NOT: attn.cpu_kernels
// CHECK-DAG: llvm.mlir.global private constant @[[TARGET:attnc_str_[0-9]+]]("x86-64-avx2\00")
// CHECK-DAG: llvm.mlir.global private constant @[[ITEMS:attnc_str_[0-9]+]]("batch,heads,seq_q/block_q\00")
// CHECK-DAG: llvm.mlir.global private constant @[[QDIMS:attnc_str_[0-9]+]]("batch,seq_q,heads,head_dim\00")
// CHECK-DAG: llvm.mlir.global private constant @[[KDIMS:attnc_str_[0-9]+]]("batch,seq_kv,kv_heads,head_dim\00")
// CHECK-DAG: llvm.mlir.global private constant @[[NAME:attnc_str_[0-9]+]]("k\00")
// CHECK: llvm.func @attnc_rt_launch(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// The phase's item function: the tensor views one by one, params, the item's (b, h, q_tile).
// CHECK: llvm.func internal @k_item(%[[T:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[I:.*]]: !llvm.ptr) -> i32
// CHECK: %[[V4:.*]] = llvm.getelementptr %[[T]][4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, i64, i64, i64)>
// CHECK-COUNT-3: llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.call @_mlir_ciface_k_tile({{.*}}, %[[V4]], %[[P]], {{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> i32
// Symbols: batch (bound by the tensors), heads = 8, kv_heads = 2, seq_q (at most 4096, in
// params[0]), seq_kv (at most 8192, params[1], REDUCED), head_dim = 128, block_q = 16.
// CHECK: llvm.mlir.global internal constant @k_symbols() {{.*}} : !llvm.array<7 x struct<"attnc_symbol_desc", (ptr, i64, i64, i32, i32)>>
// CHECK: llvm.mlir.constant(-1 : i64)
// CHECK: llvm.mlir.constant(8 : i64)
// CHECK: llvm.mlir.constant(2 : i64)
// CHECK: llvm.mlir.constant(4096 : i64)
// CHECK: llvm.mlir.constant(8192 : i64)
// CHECK-NEXT: llvm.insertvalue
// CHECK-NEXT: llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue
// CHECK-NEXT: llvm.mlir.constant(1 : i32)
// CHECK: llvm.mlir.constant(128 : i64)
// CHECK: llvm.mlir.constant(16 : i64)
// Tensors q, k, v, out, lse in the bshd layout; lse float32, an output filled with -inf.
// CHECK: llvm.mlir.global internal constant @k_tensors() {{.*}} : !llvm.array<5 x struct<"attnc_tensor_desc", (ptr, ptr, ptr, ptr, ptr, i32, i32, i32, i32, i32, i32, ptr)>>
// CHECK: llvm.mlir.addressof @[[QDIMS]]
// CHECK: llvm.mlir.addressof @[[KDIMS]]
// CHECK: llvm.mlir.global internal constant @k_phases() {{.*}} : !llvm.array<1 x struct<"attnc_phase_desc", (ptr, ptr, ptr, ptr, ptr)>>
// CHECK: llvm.mlir.addressof @[[ITEMS]]
// CHECK: %[[F:.*]] = llvm.mlir.addressof @k_item
// CHECK-NEXT: llvm.insertvalue %[[F]], %{{.*}}[3]
// CHECK-NEXT: llvm.mlir.zero : !llvm.ptr
// The descriptor's fields in the order of ATTNC_KERNEL_DESC_FIELDS (attnc_runtime.h): eight
// int32, one int64, five pointers.
// CHECK: llvm.mlir.global internal constant @k_desc() {{.*}} : !llvm.struct<"attnc_kernel_desc", (i32, i32, i32, i32, i32, i32, i32, i32, i64, ptr, ptr, ptr, ptr, ptr)>
// abi_version = ATTNC_ABI_VERSION, device_type = kDLCPU
// CHECK: llvm.mlir.constant(9 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[0]
// CHECK-NEXT: llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[1]
// num_symbols, num_tensors, num_phases, num_args, num_params, reserved
// CHECK-NEXT: llvm.mlir.constant(7 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[2]
// CHECK-NEXT: llvm.mlir.constant(5 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[3]
// CHECK-NEXT: llvm.mlir.constant(1 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[4]
// CHECK-NEXT: llvm.mlir.constant(5 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[5]
// CHECK-NEXT: llvm.mlir.constant(17 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[6]
// CHECK-NEXT: llvm.mlir.constant(0 : i32)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[7]
// cpu_needs (AVX2, FMA, BMI2, F16C)
// CHECK-NEXT: llvm.mlir.constant(15 : i64)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[8]
// name, target, symbols, tensors, phases
// CHECK-NEXT: llvm.mlir.addressof @[[NAME]]
// CHECK-NEXT: llvm.insertvalue %{{.*}}[9]
// CHECK-NEXT: llvm.mlir.addressof @[[TARGET]]
// CHECK-NEXT: llvm.insertvalue %{{.*}}[10]
// CHECK-NEXT: llvm.mlir.addressof @k_symbols
// CHECK-NEXT: llvm.insertvalue %{{.*}}[11]
// CHECK-NEXT: llvm.mlir.addressof @k_tensors
// CHECK-NEXT: llvm.insertvalue %{{.*}}[12]
// CHECK-NEXT: llvm.mlir.addressof @k_phases
// CHECK-NEXT: %[[D:[0-9]+]] = llvm.insertvalue %{{.*}}[13]
// CHECK-NEXT: llvm.return %[[D]]
// CHECK: llvm.func @k(%[[Q:.*]]: !llvm.ptr, %[[K:.*]]: !llvm.ptr, %[[V:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[L:.*]]: !llvm.ptr, %[[OPT:.*]]: !llvm.ptr) -> i32
// CHECK: %[[D:.*]] = llvm.mlir.addressof @k_desc
// CHECK: llvm.call @attnc_rt_launch(%[[D]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[OPT]])
// The exported descriptor (ATTNC_DESCRIBE_PREFIX): what hosts that load kernels read.
// CHECK: llvm.func @attnc_describe_k() -> !llvm.ptr
// CHECK-NEXT: %[[DESC:.*]] = llvm.mlir.addressof @k_desc : !llvm.ptr
// CHECK-NEXT: llvm.return %[[DESC]] : !llvm.ptr
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 8192 : i64, max_seq_q = 4096 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// The dtype as DLPack spells it, in each tensor's entry: bf16 is kDLBfloat (4) of 16 bits,
// f16 kDLFloat (2) of 16. Without lse, four tensors. Two kernels share the struct types.
// CHECK-LABEL: module
// CHECK: llvm.mlir.global internal constant @b_tensors() {{.*}} : !llvm.array<4 x struct<"attnc_tensor_desc",
// CHECK: llvm.insertvalue {{.*}}[6]
// CHECK-NEXT: llvm.mlir.constant(4 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[7]
// CHECK-NEXT: llvm.mlir.constant(16 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[8]
// CHECK: llvm.mlir.global internal constant @h_tensors() {{.*}} : !llvm.array<4 x struct<"attnc_tensor_desc",
// CHECK: llvm.insertvalue {{.*}}[6]
// CHECK-NEXT: llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[7]
// CHECK-NEXT: llvm.mlir.constant(16 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[8]
module attributes {attn.cpu_kernels = [
    {block_q = 32 : i64, dtype = bf16, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "b", num_heads = 4 : i64, num_kv_heads = 4 : i64, op = "attn.flash", outputs = 1 : i64},
    {block_q = 32 : i64, dtype = f16, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "h", num_heads = 4 : i64, num_kv_heads = 4 : i64, op = "attn.flash", outputs = 1 : i64}]} {
  llvm.func @_mlir_ciface_b_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
  llvm.func @_mlir_ciface_h_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// A grid kernel (the Halide GPU and CUDA targets): its device_type fact (kDLCUDA), and a
// device phase whose function passes the outermost extent (batch), the device and the
// stream to the grid function; the phase's item function is null.
// CHECK-LABEL: module
// CHECK: llvm.func internal @g_device(%[[T:.*]]: !llvm.ptr, %[[P:.*]]: !llvm.ptr, %[[E:.*]]: !llvm.ptr, %[[DEV:.*]]: i64, %[[S:.*]]: !llvm.ptr) -> i32
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.call @_mlir_ciface_g_grid(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]], %[[B]], %[[DEV]], %[[S]])
// CHECK: llvm.mlir.global internal constant @g_phases()
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.insertvalue {{.*}}[3]
// CHECK-NEXT: %[[G:[0-9]+]] = llvm.mlir.addressof @g_device
// CHECK-NEXT: llvm.insertvalue %[[G]], {{.*}}[4]
// CHECK: llvm.mlir.global internal constant @g_desc()
// CHECK: llvm.mlir.constant(2 : i32)
// CHECK-NEXT: llvm.insertvalue {{.*}}[1]
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, device_type = 2 : i64, dtype = f32, head_dim = 64 : i64, layout = 0 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "g", num_heads = 4 : i64, num_kv_heads = 4 : i64, op = "attn.flash", outputs = 1 : i64}]} {
  llvm.func @_mlir_ciface_g_grid(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %d: i64, %s: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'lost': needs one of the functions _mlir_ciface_lost_tile and _mlir_ciface_lost_grid}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "lost", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
}

// -----

// A tile function that does not take what the phase passes.
// expected-error @below {{attn-emit-cpu-entry: kernel 'k': _mlir_ciface_k_tile does not take the 9 arguments its phase passes}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%a: !llvm.ptr) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// The entry names its family's op, whose interfaceFromEntry reads the rest; an op of no kernel
// family (the spec form attn.attention here) or none at all is an error.
// expected-error @below {{attn-emit-cpu-entry: kernel 'k': 'attn.attention' is no registered op of a kernel family (KernelFamilyOpInterface)}}
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.attention", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k': no string 'op' (its kernel family's op) in attn.cpu_kernels}}
module attributes {attn.cpu_kernels = [{block_q = 16 : i64, dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// A fact the interface needs is missing: an error, never a silent 0.
// expected-error @below {{attn-emit-cpu-entry: kernel 'k': no integer 'block_q' in attn.cpu_kernels}}
module attributes {attn.cpu_kernels = [{dtype = f32, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k': no 'dtype' type in attn.cpu_kernels}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k': dtype 'f64' has no DLPack spelling here; expected f32, f16 or bf16}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f64, head_dim = 128 : i64, layout = 1 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}

// -----

// expected-error @below {{attn-emit-cpu-entry: kernel 'k': 'layout' is 4294967296, neither bhsd (0) nor bshd (1)}}
module attributes {attn.cpu_kernels = [{block_q = 32 : i64, dtype = f32, head_dim = 128 : i64, layout = 4294967296 : i64, max_seq_kv = 0 : i64, max_seq_q = 0 : i64, name = "k", num_heads = 8 : i64, num_kv_heads = 2 : i64, op = "attn.flash", outputs = 3 : i64}]} {
  llvm.func @_mlir_ciface_k_tile(%q: !llvm.ptr, %k: !llvm.ptr, %v: !llvm.ptr, %o: !llvm.ptr, %l: !llvm.ptr, %p: !llvm.ptr, %b: i64, %h: i64, %t: i64) -> i32 {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
