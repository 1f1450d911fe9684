//===- Pipelines.cpp - attnc's pass pipelines -----------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU lowering after attn-lower-flash-to-cpu uses upstream conversions. Math
// functions with an LLVM intrinsic become intrinsics; the rest (atan, erf,
// expm1, ...) become libm calls, so kernels link with -lm.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Pipelines.h"

#include "attnc/Transforms/Passes.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void attnc::buildPrepareLoopsPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(attn::createAttnApproximateExpPass());
  pm.addPass(createCanonicalizerPass());
}

void attnc::buildLowerToLLVMPipeline(OpPassManager &pm, llvm::StringRef target,
                                     int64_t cpuNeeds) {
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // x86vector (vdpbf16ps in bf16 kernels) lowers to its LLVM intrinsics.
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.x86Vector = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  attn::AttnEmitCpuEntryPassOptions entry;
  entry.target = target.str();
  entry.cpuNeeds = cpuNeeds;
  pm.addPass(attn::createAttnEmitCpuEntryPass(entry));
  pm.addPass(createCanonicalizerPass());
}

/// The gpu.module side follows upstream's NVVM path (convert-nvgpu-to-nvvm,
/// convert-gpu-to-nvvm, nvvm-attach-target, gpu-module-to-binary); the host
/// side is the CPU backend's LLVM lowering.
void attnc::buildCudaPipeline(OpPassManager &pm, const CudaTarget &target, CudaOutput output) {
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertNVGPUToNVVMPass());
  // The NVVM ops built on inline PTX (mbarrier waits, wgmma).
  device.addPass(createConvertNVVMToLLVMPass());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  device.addPass(attn::createAttnGridConstantArgsPass());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = target.chip.str();
  attach.features = target.features.str();
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  GpuModuleToBinaryPassOptions binary;
  // A cubin runs only on its own major architecture (sm_80 SASS does not load on sm_90), so
  // a target for "sm_80 and later" embeds a fatbin: its SASS and its PTX, which the driver
  // compiles for a newer GPU at load. An arch-specific target (sm_90a) has no later GPU.
  bool portable = !target.chip.ends_with("a");
  binary.compilationTarget = output == CudaOutput::ptx ? "isa" : portable ? "fatbin" : "bin";
  // Where ptxas and libdevice (exp2, log, max as __nv_* calls) are.
  binary.toolkitPath = cudaToolkitPath();
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (output == CudaOutput::ptx)
    return;
  pm.addPass(attn::createAttnEmbedGpuBinaryPass());
  buildLowerToLLVMPipeline(pm, target.name, /*cpuNeeds=*/0);
}

void attnc::registerPipelines() {
  PassPipelineRegistration<>("attn-prepare-loops",
                             "Clean up the tiled form into the loops stage",
                             buildPrepareLoopsPipeline);
  PassPipelineRegistration<>("attn-lower-to-llvm",
                             "Lower the loops stage to the LLVM dialect with "
                             "C entry points",
                             [](OpPassManager &pm) { buildLowerToLLVMPipeline(pm); });
}
