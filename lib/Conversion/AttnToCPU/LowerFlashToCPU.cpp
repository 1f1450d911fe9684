//===- LowerFlashToCPU.cpp - attn-lower-flash-to-cpu ----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Replaces each attn.kernel holding an attn.flash by its x86-64 tile function
// (FlashKernel.cpp; an attn.flash_backward by its phases', BackwardKernel.cpp;
// an attn.linear_attention by its phases', LinearKernel.cpp) and records the facts the runtime descriptor needs in the
// module attribute `attn.cpu_kernels`. Expects attn-tile-flash to have run;
// the vector width and register block come from the CPU target description.
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

/// The split-KV decode kernel for num_splits, else the prefill tile function.
LogicalResult lowerFlash(FlashOp flash, const CpuKernelConfig &config) {
  if (flash.getNumSplits())
    return buildCpuDecodeKernel(flash, config);
  return buildCpuFlashKernel(flash, config);
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
      if (auto backward = dyn_cast_or_null<FlashBackwardOp>(kernel.getCompute().getOperation())) {
        if (failed(buildCpuBackwardKernel(backward, config)))
          return signalPassFailure();
        kernels.push_back(backward.describeEntry(kernel.getSymName(), kDLCPU));
        kernel.erase();
        continue;
      }
      if (auto linear = dyn_cast_or_null<LinearAttentionOp>(kernel.getCompute().getOperation())) {
        if (failed(buildCpuLinearKernel(linear, config)))
          return signalPassFailure();
        kernels.push_back(linear.describeEntry(kernel.getSymName(), kDLCPU));
        kernel.erase();
        continue;
      }
      FailureOr<FlashOp> flash = flashToLower(kernel, "MLIR CPU", target);
      if (failed(flash) || failed(lowerFlash(*flash, config)))
        return signalPassFailure();
      kernels.push_back(flash->describeEntry(kernel.getSymName(), kDLCPU));
      kernel.erase();
    }
    module->setAttr(kKernelEntriesAttr, ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
