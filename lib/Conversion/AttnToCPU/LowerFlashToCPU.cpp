//===- LowerFlashToCPU.cpp - attn-lower-flash-to-cpu ----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Replaces each attn.kernel holding an attn.flash by its x86-64 tile function
// (FlashKernel.cpp) and records the facts the runtime descriptor needs in the
// module attribute `attn.cpu_kernels`. Expects attn-tile-flash to have run;
// the vector width and register block come from the CPU target description.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Target/CPU/CpuTarget.h"
#include "attnc/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERFLASHTOCPUPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

DictionaryAttr mlir::attn::describeCpuKernel(FlashOp op, StringRef name,
                                            std::optional<int64_t> deviceType) {
  Builder b(op.getContext());
  // The C ABI always takes and fills `out` (an lse-only spec too): one
  // signature for every kernel, and out costs nothing extra to write.
  int64_t outputs = 1 | (op.hasOutput(OutputKind::lse) ? 2 : 0) |
                    (op.hasOutput(OutputKind::weights) ? 4 : 0);
  std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq();
  int64_t maxQ = maxSeq ? (*maxSeq)[0] : 0, maxKv = maxSeq ? (*maxSeq)[1] : 0;
  // A block layout bounds the lengths too (0: unbounded).
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  auto bound = [](int64_t given, int64_t c) {
    int64_t b = c == attnc::mask::kUnbounded ? 0 : c;
    return given > 0 && b > 0 ? std::min(given, b) : std::max(given, b);
  };
  maxQ = bound(maxQ, cover.q);
  maxKv = bound(maxKv, cover.kv);
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("num_heads", i64(op.getHeads())),
      b.getNamedAttr("num_kv_heads", i64(op.getKvHeads())),
      b.getNamedAttr("head_dim", i64(op.getDim())),
      b.getNamedAttr("dtype", TypeAttr::get(op.getDtype())),
      b.getNamedAttr("layout", i64(static_cast<int64_t>(op.getLayout()))),
      b.getNamedAttr("outputs", i64(outputs)),
      b.getNamedAttr("block_q", i64(op.getTileQ())),
      b.getNamedAttr("max_seq_q", i64(maxQ)),
      b.getNamedAttr("max_seq_kv", i64(maxKv)),
  });
  if (deviceType)
    facts.set("device_type", i64(*deviceType));
  return facts.getDictionary(op.getContext());
}

namespace {

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
      if (failed(buildCpuFlashKernel(kernel, config)))
        return signalPassFailure();
      kernels.push_back(describeCpuKernel(kernel.getFlash(), kernel.getSymName()));
      kernel.erase();
    }
    module->setAttr("attn.cpu_kernels", ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
