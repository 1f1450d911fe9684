//===- LowerFlashToCPU.cpp - attn-lower-flash-to-cpu ----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Replaces each attn.kernel by its family op's tile functions (attn.flash:
// FlashKernel.cpp, DecodeKernel.cpp; attn.flash_backward: BackwardKernel.cpp;
// attn.linear_attention: LinearKernel.cpp; attn.multihead_attention:
// MultiHeadKernel.cpp) and records the facts the runtime descriptor needs in
// the module attribute `attn.cpu_kernels`. Expects attn-tile-flash to have
// run; the vector width and register block come from the CPU target
// description.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Target/CPU/CpuTarget.h"
#include "attnc/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERFLASHTOCPUPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The tile functions of a kernel's family op: attn.flash (the split-KV
/// decode kernel for num_splits, else the prefill one), attn.flash_backward,
/// attn.linear_attention, attn.multihead_attention, attn.projection.
LogicalResult lowerKernel(KernelOp kernel, const CpuKernelConfig &config, StringRef target) {
  Operation *compute = kernel.getCompute();
  if (auto backward = dyn_cast_or_null<FlashBackwardOp>(compute))
    return buildCpuBackwardKernel(backward, config);
  if (auto linear = dyn_cast_or_null<LinearAttentionOp>(compute))
    return buildCpuLinearKernel(linear, config);
  if (auto mha = dyn_cast_or_null<MultiHeadAttentionOp>(compute))
    return buildCpuMultiHeadKernel(mha, config);
  if (auto projection = dyn_cast_or_null<ProjectionOp>(compute))
    return buildCpuProjectionKernel(projection, config);
  FailureOr<FlashOp> flash = flashToLower(kernel, "MLIR CPU", target, /*buildsDecode=*/true);
  if (failed(flash))
    return failure();
  if (flash->getNumSplits())
    return buildCpuDecodeKernel(*flash, config);
  return buildCpuFlashKernel(*flash, config);
}

struct AttnLowerFlashToCPUPass
    : public mlir::attn::impl::AttnLowerFlashToCPUPassBase<AttnLowerFlashToCPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<attnc::CpuTarget> cpu = attnc::lookupCpuTarget(target);
    if (!cpu) {
      module.emitError("attn-lower-flash-to-cpu: ") << llvm::toString(cpu.takeError());
      return signalPassFailure();
    }
    if (qkKeys < 0 || qkRowVectors < 0 || pvRows < 0 || pvVectors < 0 || unroll < 0) {
      module.emitError("attn-lower-flash-to-cpu: register block sizes and unroll must be >= 0");
      return signalPassFailure();
    }
    if (softmax != "fused" && softmax != "pass") {
      module.emitError("attn-lower-flash-to-cpu: softmax must be fused or pass, got '")
          << softmax << "'";
      return signalPassFailure();
    }
    CpuKernelConfig config;
    config.vectorWidth = cpu->vectorWidth;
    config.vectorRegisters = cpu->vectorRegisters;
    config.avx512Scalef = cpu->isX86() && cpu->vectorWidth == 16;
    config.qkKeys = qkKeys ? int64_t(qkKeys) : cpu->qkKeys();
    config.qkRowVectors = qkRowVectors ? int64_t(qkRowVectors) : cpu->qkRowVectors();
    config.pvRows = pvRows ? int64_t(pvRows) : cpu->pvRows();
    config.pvVectors = pvVectors ? int64_t(pvVectors) : cpu->pvVectors();
    config.unroll = unroll ? int64_t(unroll) : cpu->loopUnroll();
    config.fusedSoftmax = softmax == "fused";
    config.bf16Dot = cpu->bf16Dot;
    config.countTiles = countTiles;
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      if (failed(lowerKernel(kernel, config, target)))
        return signalPassFailure();
      kernels.push_back(kernel.getCompute().describeEntry(kernel.getSymName(), kDLCPU));
      kernel.erase();
    }
    module->setAttr(kKernelEntriesAttr, ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
