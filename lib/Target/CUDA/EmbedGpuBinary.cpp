//===- EmbedGpuBinary.cpp - attn-embed-gpu-binary -------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel image goes into the object as plain constant data, loaded by
// our launcher (cuModuleLoadData), rather than through MLIR's gpu-to-llvm
// host lowering, whose runtime library (libmlir_cuda_runtime) Debian does not
// ship and whose module handling attnc would not control.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMBEDGPUBINARYPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnEmbedGpuBinaryPass
    : public mlir::attn::impl::AttnEmbedGpuBinaryPassBase<AttnEmbedGpuBinaryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto binary : llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>())) {
      StringRef name = binary.getSymName();
      if (!name.consume_back("_gpu") || binary.getObjects().size() != 1) {
        binary.emitOpError("attn-embed-gpu-binary expects gpu.binary @<kernel>_gpu with one "
                           "object, from attn-lower-flash-to-nvgpu");
        return signalPassFailure();
      }
      auto placeholder = dyn_cast_or_null<LLVM::GlobalOp>(
          SymbolTable::lookupSymbolIn(module, (name + "_image").str()));
      if (!placeholder) {
        binary.emitOpError("has no placeholder @") << name << "_image to fill";
        return signalPassFailure();
      }
      StringAttr bytes = cast<gpu::ObjectAttr>(binary.getObjects()[0]).getObject();
      OpBuilder b(placeholder);
      auto image = LLVM::GlobalOp::create(
          b, placeholder.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size()),
          /*isConstant=*/true, LLVM::Linkage::Private, placeholder.getSymName(), bytes);
      image.setAlignment(placeholder.getAlignment());
      // A section of its own (merged into .rodata by a linker), so tools can
      // take the cubin out of an object: objcopy --dump-section.
      image.setSection(StringRef(".rodata.attnc_cubin." + name.str()));
      placeholder.erase();
      binary.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
