//===- Passes.td - attnc passes ----------------------------*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnNormalizePass : Pass<"attn-normalize", "::mlir::ModuleOp"> {
  let summary = "Rewrites attention specs into their canonical form";
  let description = [{
    Every later stage expects normalized specs:

    * `num_kv_heads` and `scale` (`1/sqrt(head_dim)`) are filled in when absent;
    * `#attn.causal<a>` becomes `#attn.sliding_window<left = inf, right = 0, align = a>`;
    * a sliding window that covers every position becomes `#attn.full`: both bounds `inf`, or,
      when `max_seq` bounds the lengths, bounds wide enough for every allowed length;
    * nested `and` / `or` are flattened; `#attn.full` is dropped from an `and` and absorbs an
      `or`; duplicate operands are removed; sliding windows of the same alignment merge into
      one (both contain their center, so their intersection and their union are windows
      again), and the merged window is checked for covering everything once more; a
      composition left with one operand becomes that operand.

    A causal `attn.linear_attention` takes `linear-chunk` as its `chunk` where the option is
    set (the schedule's `chunk`; 0 leaves the spec's).

    The rewrite is idempotent.
  }];
  let options = [
    Option<"linearChunk", "linear-chunk", "int64_t", /*default=*/"0",
           "Rows per chunk of causal linear attentions: 32, 64 or 128 (0: the spec's)">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnTileFlashPass : Pass<"attn-tile-flash", "::mlir::ModuleOp"> {
  let summary = "Rewrites each attn.attention into attn.flash, its tiled form (the `tiled` stage)";
  let description = [{
    Replaces the `attn.attention` of every kernel by an `attn.flash` with the same
    (normalized) parameters and regions and the tile sizes `block_q` x `block_kv`: the
    target-neutral Flash form every backend lowers. Nothing target-specific is decided
    here: the tile sizes are the backend's tunables (`attnc --schedule`), and the sizes
    left automatic follow a rule given as numbers (block_q by head_dim, block_kv by element
    size), which the registry fills in per target (lib/Target/Registry.cpp).

    A spec with `outputs = [dq, dk, dv]` becomes an `attn.flash_backward` instead, with the
    same tile sizes and `kv_chunks` (the KV ranges whose dq partials it sums in order).

    Preconditions: `attn-normalize` has run.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per tile (0: automatic, auto-block-q or auto-block-q-large-head)">,
    Option<"blockKv", "block-kv", "int64_t", /*default=*/"0",
           "Keys per KV tile (0: automatic, auto-block-kv or auto-block-kv-f32)">,
    Option<"autoBlockQ", "auto-block-q", "int64_t", /*default=*/"64",
           "The automatic block_q for head_dim <= 128">,
    Option<"autoBlockQLargeHead", "auto-block-q-large-head", "int64_t", /*default=*/"32",
           "The automatic block_q for head_dim > 128">,
    Option<"blockQMultiple", "block-q-multiple", "int64_t", /*default=*/"1",
           "The automatic block_q rounded down to a multiple of this where it is larger "
           "(a CPU backend's register block rows: whole blocks per tile)">,
    Option<"autoBlockKv", "auto-block-kv", "int64_t", /*default=*/"::mlir::attn::kDefaultBlockKv",
           "The automatic block_kv for 16-bit elements">,
    Option<"autoBlockKvF32", "auto-block-kv-f32", "int64_t",
           /*default=*/"::mlir::attn::kDefaultBlockKv",
           "The automatic block_kv for f32 (the CUDA tensor-core kernels: 32, as TF32 scores "
           "and P take twice the registers of 16-bit ones)">,
    Option<"autoDecodeWidenedBytes", "auto-decode-widened-bytes", "int64_t", /*default=*/"0",
           "A CPU decode kernel widening f16 K and V tiles to f32 keeps both within this many "
           "bytes (an L1 share; 0: no bound): its automatic block_kv halves down to 16 until "
           "they fit">,
    Option<"kvChunks", "kv-chunks", "int64_t", /*default=*/"0",
           "A backward kernel's KV chunks, the dq partials it sums in order (0: automatic, 4)">
  ];
}

def AttnLowerFlashToCPUPass : Pass<"attn-lower-flash-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lowers each attn.flash to an x86-64 SIMD tile function (scf / vector / memref)";
  let description = [{
    Replaces every `attn.kernel` holding an `attn.flash` (f32, f16 or bf16) with `func.func
    @<name>_tile`, the tile function of `attnc_runtime.h`: one call computes `block_q`
    query rows of one (batch, head) with the online softmax of `attn.flash` over KV tiles
    of `block_kv` keys. Query rows run along the vector lanes; each KV tile is classified
    full / partial / empty by the mask's tile rule (index arithmetic on its bounds); empty
    tiles are never visited, full tiles skip mask evaluation, partial tiles evaluate the
    mask and the inlined `mask_mod` per element; `score_mod` is inlined.

    The vector width and the register blocks of Q K^T and P V come from the CPU target
    description (`target`); `qk-keys` / `qk-row-vectors` and `pv-rows` / `pv-vectors`
    override them (0: the target's choice), and `unroll` the number of reduction steps
    (head_dim for Q K^T, keys for P V) per iteration of those loops. V is read in place.
    `softmax=fused` takes the softmax of full tiles (no mask to evaluate, no `score_mod`)
    after the first one in the Q K^T register blocks, against the rows' running max, and
    recomputes a tile with the softmax pass only if a row's sum of 2^(s - max) passes 2^12
    (scores that rose well above that max); `softmax=pass` always runs the pass over each
    tile's scores, as do the bf16 dot-product kernels.
    bf16 on a target with AVX512-BF16 runs Q K^T and P V as `x86vector.avx512.dot` (vdpbf16ps) on bf16 pairs,
    P rounded to bf16; otherwise f16 / bf16 are widened to f32 as they are loaded.
    Scores, softmax state and accumulators are f32 in every case.
    The kernel's static facts (heads, head_dim, dtype, layout, outputs, tile size,
    max_seq) are recorded in the module attribute `attn.cpu_kernels` for
    `attn-emit-cpu-entry`. Leaves func / scf / memref / vector / arith / math ops.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"x86-64-avx512\"",
           "CPU target description: x86-64-avx512, x86-64-avx512-bf16, x86-64-avx2 or host">,
    Option<"qkKeys", "qk-keys", "int64_t", /*default=*/"0",
           "Keys per Q K^T register block (0: from the target)">,
    Option<"qkRowVectors", "qk-row-vectors", "int64_t", /*default=*/"0",
           "Vectors of query rows per Q K^T register block (0: from the target)">,
    Option<"pvRows", "pv-rows", "int64_t", /*default=*/"0",
           "Query rows per P V register block (0: from the target)">,
    Option<"pvVectors", "pv-vectors", "int64_t", /*default=*/"0",
           "Vectors of head_dim per P V register block (0: from the target)">,
    Option<"unroll", "unroll", "int64_t", /*default=*/"0",
           "Steps of the Q K^T and P V reduction loops per loop iteration (0: from the target)">,
    Option<"softmax", "softmax", "std::string", /*default=*/"\"fused\"",
           "Where full tiles take the softmax: fused (in the Q K^T register blocks) or pass "
           "(a pass over each tile's scores)">,
    Option<"countTiles", "count-tiles", "bool", /*default=*/"false",
           "Test instrumentation: count visited KV tiles in a global "
           "`<kernel>_tiles_visited` (never set by attnc's production pipeline)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::x86vector::X86VectorDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnLowerFlashToHalideCallPass
    : Pass<"attn-lower-flash-to-halide-call", "::mlir::ModuleOp"> {
  let summary = "Replaces each attn.flash by a tile or grid function that calls its Halide pipeline";
  let description = [{
    The Halide backend's half in MLIR. The pipeline itself (`<name>_halide`, see
    include/attnc/Target/Halide/FlashPipeline.h) is compiled by Halide from the same
    attn.flash; this pass replaces every `attn.kernel` with a function of `attnc_runtime.h`
    in the LLVM dialect that hands its memref views and the kernel's constants (block_q,
    head_dim, heads, element size) to the runtime's adapter:
    - on a CPU target (`device=cpu`), the tile function `_mlir_ciface_<name>_tile`, calling
      `attnc_rt_halide_tile`, which builds `halide_buffer_t` views of one work item;
    - on a GPU target (`device=cuda` or `opencl`), the grid function
      `_mlir_ciface_<name>_grid`, calling `attnc_rt_halide_grid` with Halide's CUDA device
      interface (cuda: device pointers) or none (opencl: host tensors), for the whole
      tensors at once.
    Records the kernel's facts in `attn.cpu_kernels` as attn-lower-flash-to-cpu does (with
    `device_type` kDLCUDA for cuda), so attn-emit-cpu-entry adds the same descriptor and C
    entry: one runtime and one ABI for both backends.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Where the pipeline runs: cpu, cuda or opencl">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnLowerFlashToNVGPUPass : Pass<"attn-lower-flash-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Lowers each attn.flash to a CUDA tensor-core kernel (mma.sync or wgmma) and its grid function";
  let description = [{
    The MLIR CUDA backend. Every `attn.kernel` holding an `attn.flash` becomes `gpu.module @<name>_gpu` with the kernel `gpu.func @<name>`, and the grid
    function `_mlir_ciface_<name>_grid` of `attnc_runtime.h` (LLVM dialect), which hands
    the runtime's flat views, the kernel image `@<name>_image` (filled by
    `attn-embed-gpu-binary`) and the launch facts (heads, block_q, threads, shared bytes)
    to the runtime's launcher.

    `target=cuda-sm80` (sm_80 and later): FlashAttention-2 shaped, one CTA per (query tile,
    head, batch), one warp per 16 query rows; the query tile and two stages of K and V tiles
    in dynamic shared memory, filled with `cp.async` (the next visited tile's while the
    current one is computed); Q K^T and P V on `mma.sync.m16n8k16` (bf16 or f16 in, f32
    accumulators) with operands from `ldmatrix` (V through `ldmatrix.trans`), P kept in
    registers as the A operand; the online softmax per row with quad shuffles. Launched by
    `attnc_rt_cuda_launch`.

    `target=cuda-sm90a` (Hopper): the same walk with one warpgroup per 64 query rows; tiles
    arrive by TMA (`cp.async.bulk.tensor`, 128-byte swizzle, zero fill past the sequence and
    head_dim) under mbarriers, thread 0 issuing the next tile's loads while the current one
    is computed; Q K^T on `wgmma.mma_async` with both operands in shared memory, P V on
    wgmma with P from registers (one inline-PTX instruction: the NVVM dialect has no
    register-A form). Its first three arguments are the q, k, v tensor maps
    (`attn.tensor_map_args`), built per call by `attnc_rt_cuda_launch_tma`.

    In both, KV tiles are walked within the mask's key range and classified by the shared
    tile rules: empty ones are never loaded, full ones skip mask evaluation, `score_mod` /
    `mask_mod` are inlined. Records the kernel's facts in `attn.cpu_kernels` with
    `device_type` kDLCUDA, so `attn-emit-cpu-entry` adds the usual descriptor and C entry.

    f32 specs run on TF32 tensor cores on `cuda-sm80` (`mma.sync.m16n8k8`, inputs rounded
    to TF32, f32 accumulation; P V takes each 8-key step's keys in the order that makes P's
    accumulators the A fragment in place), with one KV stage where two do not fit.

    A split-KV decode kernel (`num_splits`, with or without `kv_cache`) becomes two kernels
    in the module, the phases of its kernel interface, each with its grid function
    (`_mlir_ciface_<name>_grid`, `_mlir_ciface_<name>_merge_grid`) calling
    `attnc_rt_cuda_launch_views` with every view: `@<name>`, one CTA per (split, KV head,
    batch), is the mma.sync CTA on any target with its tile rows the query heads of a KV
    head at every position (at least 64 rows), its KV tiles the split's, key rows found
    through the block table of a paged cache, writing normalized partials and their
    log-sum-exp to the scratch `o_part` / `lse_part`; `@<name>_merge`, one CTA per (head,
    batch), combines the splits in order. `varlen` is refused.

    Rejects, with a located error, what a kernel does not cover: f32 on cuda-sm90a (but for
    decode), head_dim not a multiple of 16 bytes' worth of elements, block_q not a multiple
    of 16 (sm90a: 64), block_kv not a multiple of 16, tiles beyond the target's shared memory.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cuda-sm80\"",
           "The kernel to build: cuda-sm80 (mma.sync) or cuda-sm90a (wgmma + TMA)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"
  ];
}

def AttnGridConstantArgsPass : Pass<"attn-grid-constant-args", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Passes a kernel's leading tensor-map arguments by value as grid constants";
  let description = [{
    After `convert-gpu-to-nvvm`: on each kernel `llvm.func` carrying
    `attn.tensor_map_args = N`, the first N `!llvm.ptr` arguments get
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and `nvvm.grid_constant`, so each
    is a 128-byte CUtensorMap in the kernel's parameter space whose address TMA takes
    directly (a plain pointer argument would make the tensor map an ordinary copy in local
    memory, which TMA cannot read). The GPU lowering drops such argument attributes from
    `gpu.func`, hence this step after it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

def AttnEmbedGpuBinaryPass : Pass<"attn-embed-gpu-binary", "::mlir::ModuleOp"> {
  let summary = "Moves each gpu.binary's cubin into the host module as a constant";
  let description = [{
    After `gpu-module-to-binary`: the object of every `gpu.binary @<name>_gpu` (a cubin)
    replaces the placeholder `llvm.mlir.global @<name>_image` that
    `attn-lower-flash-to-nvgpu` left for it, and the binary is erased, leaving a host
    module of the LLVM dialect whose object carries its kernels. Fails on a binary without
    exactly one object or without its placeholder.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnApproximateExpPass : Pass<"attn-approximate-exp"> {
  let summary = "Replaces math.exp by MLIR's vectorizable polynomial approximation";
  let description = [{
    `math.exp` on vectors would otherwise become one libm call per lane. MLIR's
    approximation (range reduction plus a degree-5 polynomial, within a few ulp of expf)
    stays in vector registers. Only `exp` is rewritten; functions used by score_mod /
    mask_mod bodies keep their libm or LLVM-intrinsic lowering.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect"];
}

def AttnEmitCpuEntryPass : Pass<"attn-emit-cpu-entry", "::mlir::ModuleOp"> {
  let summary = "Adds each kernel's C entry point and runtime descriptor (LLVM dialect)";
  let description = [{
    For every kernel listed in the module attribute `attn.cpu_kernels`, adds the constant
    `attnc_kernel_desc` `<name>_desc` with its symbol, tensor and phase tables (kernel
    interface v2, from the entry's family: `interfaceFromEntry` of the
    `KernelFamilyOpInterface` op its `op` names, `attnc::attentionInterface` for
    `attn.flash`), the phase's function `<name>_item` (or `<name>_device`) that passes the
    runtime's arrays of views and coordinates to `_mlir_ciface_<name>_tile` (or `_grid`),
    and the exported entry `int <name>(<tensors>..., opt)` that forwards to
    `attnc_rt_launch(&<name>_desc, ...)` (attention's five tensors) or `attnc_rt_run`.
    Runs after the conversion to the LLVM dialect.
    The descriptor also records the target the code is built for and the CPU features it
    needs (`attnc_cpu_feature` bits), which the runtime checks before running it.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "The attnc target the module's code is built for (descriptor `target`)">,
    Option<"cpuNeeds", "cpu-needs", "int64_t", /*default=*/"0",
           "attnc_cpu_feature bits that code needs (descriptor `cpu_needs`)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_PASSES_TD
