//===- MlirCudaBackend.cpp - the MLIR backend's CUDA kernels --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "Emit.h"

#include "attnc/Conversion/Pipelines.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::emit;

/// --emit=ptx: each kernel's PTX, as gpu-module-to-binary gives it to ptxas
/// for the cubin the object embeds, headed by its launch.
static llvm::Error writePtx(ModuleOp module, const Selection &selection,
                            llvm::StringRef path) {
  if (llvm::Error err = runPipeline(module, selection, PipelineStage::loops))
    return err;
  llvm::StringMap<std::string> launches;
  module.walk([&](gpu::GPUFuncOp func) {
    auto bytes = func->getAttrOfType<IntegerAttr>("attn.dynamic_shared_bytes");
    std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize();
    if (bytes && block)
      launches[func.getName()] = llvm::formatv(
          "{0} threads per block, {1} bytes of dynamic shared memory", (*block)[0],
          bytes.getInt());
  });
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return error("invalid MLIR pass manager options");
  buildCudaPipeline(pm, *lookupMlirCudaTarget(selection.gpuTarget), CudaOutput::ptx);
  if (failed(pm.run(module)))
    return alreadyReported();
  return writeText(path, [&](auto &os) {
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      llvm::StringRef kernel = binary.getSymName().drop_back(strlen("_gpu"));
      os << "// attnc: kernel " << kernel << ": " << launches[kernel] << "\n";
      for (Attribute object : binary.getObjects())
        os << cast<gpu::ObjectAttr>(object).getObject().getValue() << "\n";
    }
  });
}

llvm::Error MlirCudaBackend::emit(ModuleOp module, const Selection &selection, EmitStage stage,
                                  const CompileOutput &output) const {
  if (stage == EmitStage::ptx)
    return produce(output, [&] { return writePtx(module, selection, output.path); });
  return MlirCpuBackend::emit(module, selection, stage, output);
}
