//===- GridConstantArgs.cpp - attn-grid-constant-args ---------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// TMA reads its tensor map from the parameter, constant or global space. A
// kernel parameter declared byval + grid_constant stays in the parameter
// space and its address is taken there (cvta.param), which is how CUDA C++
// passes `const __grid_constant__ CUtensorMap`. The attributes are set here,
// after convert-gpu-to-nvvm, because the GPU lowering does not carry them
// over from gpu.func.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToNVGPU/FlashMmaKernel.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGRIDCONSTANTARGSPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// sizeof and alignof(CUtensorMap).
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct AttnGridConstantArgsPass
    : public mlir::attn::impl::AttnGridConstantArgsPassBase<AttnGridConstantArgsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto count = func->getAttrOfType<IntegerAttr>(attn::kTensorMapArgsAttr);
      if (!count)
        continue;
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
          count.getInt() > func.getNumArguments()) {
        func.emitOpError("attn-grid-constant-args expects a kernel with at least ")
            << count.getInt() << " arguments";
        return signalPassFailure();
      }
      Builder b(&getContext());
      auto byval = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
      for (unsigned i = 0; i < count.getInt(); ++i) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), TypeAttr::get(byval));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlign));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
      }
      func->removeAttr(attn::kTensorMapArgsAttr);
    }
  }
};

} // namespace
