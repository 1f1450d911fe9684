// attn-lower-flash-to-nvgpu on an f32 spec: the mma.sync kernel on TF32 tensor cores. Under the
// tiler's tensor-core rule the KV tiles are 32 keys; shared rows are f32 (head_dim + 4 for
// the 16-byte skew), copied 4 elements per cp.async and read by ldmatrix through an i16 view
// (one f32 per pair); every operand is rounded to TF32 (cvt.rna); m16n8k8 MMAs; P V reads V
// with plain loads (ldmatrix cannot transpose 32-bit elements).
// RUN: attnc-opt %s --attn-normalize --attn-tile-flash="block-kv=0 auto-block-kv-f32=32" --attn-lower-flash-to-nvgpu | FileCheck %s

// CHECK: attn.cpu_kernels = [{block_q = 64 : i64, device_type = 2 : i64, dtype = f32,
// CHECK: gpu.func @tf32(%{{.*}}: memref<?xf32, 1>, {{.*}}) kernel attributes {attn.dynamic_shared_bytes = 52224 : i64,
// 64 query rows and two stages of 32-key K and V tiles: 192 rows of 68 f32.
// CHECK: memref.view {{.*}} to memref<192x68xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<192x136xi16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4, %{{.*}} {bypassL1} : memref<?xf32, 1> to memref<192x68xf32
// CHECK: nvgpu.ldmatrix {{.*}} : memref<192x136xi16, {{.*}}> -> vector<4x2xi16>
// CHECK: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: scf.while
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK: math.exp2
// CHECK: memref.load {{.*}} : memref<192x68xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.convert.float.to.tf32
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// The output is f32 pairs, not rounded.
// CHECK: vector.store {{.*}} : memref<?xf32, 1>, vector<2xf32>
// CHECK: llvm.call @attnc_rt_cuda_launch(
attn.kernel @tf32 {
  attn.attention {num_heads = 2, head_dim = 64, dtype = f32, layout = bhsd, mask = #attn.causal<top_left>, outputs = [out]}
}
