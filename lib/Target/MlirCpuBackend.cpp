//===- MlirCpuBackend.cpp - the MLIR backend's CPU kernels ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "Emit.h"
#include "ParallelKernels.h"
#include "SharedTiles.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::emit;

// Each kernel compiled on its own (its own MLIR and LLVM module, freed before
// the next), on `jobs` threads, so compile memory is one kernel's a thread
// whatever the spec's size, then the parts merged in spec order. A kernel
// whose tile function is an earlier kernel's code calls that one
// (SharedTiles.h).
llvm::Error emit::writeKernelwiseObject(ModuleOp module, const Selection &selection,
                                        unsigned jobs, llvm::StringRef path,
                                        llvm::StringRef suffix) {
  llvm::SmallVector<attn::KernelOp> kernels(module.getOps<attn::KernelOp>());
  if (kernels.size() <= 1) {
    if (llvm::Error err = runPipeline(module, selection, PipelineStage::llvmDialect))
      return err;
    return writeObjectFile(module, selection.cpu, path, suffix);
  }
  ObjectParts parts;
  std::vector<std::string> paths;
  for (size_t i = 0; i < kernels.size(); ++i) {
    llvm::Expected<std::string> part = parts.add();
    if (!part)
      return part.takeError();
    paths.push_back(*part);
  }
  SharedTiles shared(kernels.size());
  auto compileOne = [&](ModuleOp single, size_t index) -> llvm::Error {
    llvm::StringRef name = kernels[index].getSymName();
    llvm::Error err = runPipeline(single, selection, PipelineStage::lowered);
    size_t owner = shared.share(index, err ? "" : tileKey(single, name));
    if (err)
      return err;
    bool stubbed = owner != index && stubTile(single, name);
    if (llvm::Error err = runPipeline(single, selection, PipelineStage::llvmDialect,
                                      PipelineStage::lowered))
      return err;
    if (stubbed)
      useTileOf(single, name, kernels[owner].getSymName(), suffix);
    return writeObjectFile(single, selection.cpu, paths[index], suffix);
  };
  if (llvm::Error err = compileKernels(module, jobs, compileOne))
    return err;
  return parts.merge(path, selection.cpu.triple);
}

/// --emit=llvm / asm: the whole module at once.
static llvm::Error writeLlvmOrAssembly(ModuleOp module, const Selection &selection,
                                       EmitStage stage, llvm::StringRef path) {
  if (llvm::Error err = runPipeline(module, selection, PipelineStage::llvmDialect))
    return err;
  llvm::LLVMContext context;
  auto llvmModule = translateAndOptimize(module, selection.cpu, context);
  if (!llvmModule)
    return llvmModule.takeError();
  if (stage == EmitStage::llvm)
    return writeText(path, [&](auto &os) { (*llvmModule)->print(os, nullptr); });
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    return error(message);
  if (llvm::Error err = emitMachineCode(**llvmModule, selection.cpu, true, out->os()))
    return err;
  out->keep();
  return llvm::Error::success();
}

llvm::Error MlirCpuBackend::emit(ModuleOp module, const Selection &selection, EmitStage stage,
                                 const CompileOutput &output) const {
  switch (stage) {
  case EmitStage::halide:
    return error("--emit=halide needs --backend=halide");
  case EmitStage::ptx:
    return error("--emit=ptx needs a CUDA target (cuda-sm80, cuda-sm90a, or with "
                 "--backend=halide cuda-sm90)");
  case EmitStage::spec:
  case EmitStage::normalized:
  case EmitStage::tiled:
  case EmitStage::loops:
    return printMlirStage(module, selection, stage, output);
  case EmitStage::llvm:
  case EmitStage::assembly:
    return writeLlvmOrAssembly(module, selection, stage, output.path);
  case EmitStage::obj:
  case EmitStage::so:
    break;
  }
  if (stage == EmitStage::so && !selection.cpu.isX86())
    return error("--emit=so links for this machine; for " + selection.cpu.name +
                 " write an object (--emit=obj) and link it with that target's toolchain");
  OwningOpRef<ModuleOp> spec = module.clone();
  return writeOutputs(
      [&](llvm::StringRef objPath) {
        return writeKernelwiseObject(module, selection, output.jobs, objPath);
      },
      *spec, selection, stage, output);
}
