// attn-grid-constant-args: after the NVVM lowering, a kernel's leading tensor-map arguments
// (attn.tensor_map_args) become 128-byte byval grid constants; other functions are untouched.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(attn-grid-constant-args))' | FileCheck %s

// CHECK: llvm.func @k(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: i64)
// CHECK-NOT: attn.tensor_map_args
// CHECK: llvm.func @helper(%{{.*}}: !llvm.ptr)
gpu.module @m {
  llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) attributes {attn.tensor_map_args = 2 : i64, gpu.kernel, nvvm.kernel} {
    llvm.return
  }
  llvm.func @helper(%a: !llvm.ptr) {
    llvm.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{attn-grid-constant-args expects a kernel with at least 3 arguments}}
  llvm.func @k(%a: !llvm.ptr) attributes {attn.tensor_map_args = 3 : i64, nvvm.kernel} {
    llvm.return
  }
}
