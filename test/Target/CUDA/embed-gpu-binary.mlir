// attn-embed-gpu-binary: the cubin of gpu.binary @<kernel>_gpu fills the placeholder
// @<kernel>_image in a section of its own, and the binary goes.
// RUN: attnc-opt %s --split-input-file --verify-diagnostics --attn-embed-gpu-binary | FileCheck %s

// CHECK: module {
// CHECK-NEXT: llvm.mlir.global private constant @k_image("\7FELF\00cubin") {addr_space = 0 : i32, alignment = 64 : i64, section = ".rodata.attnc_cubin.k"}
// CHECK-NOT: gpu.binary
module attributes {gpu.container_module} {
  llvm.mlir.global private constant @k_image("") {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<0 x i8>
  gpu.binary @k_gpu [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF\00cubin">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{has no placeholder @lost_image to fill}}
  gpu.binary @lost_gpu [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "x">]
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{attn-embed-gpu-binary expects gpu.binary @<kernel>_gpu with one object, from attn-lower-flash-to-nvgpu}}
  gpu.binary @other [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "x">]
}
