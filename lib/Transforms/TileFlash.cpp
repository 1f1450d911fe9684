//===- TileFlash.cpp - attn-tile-flash: kernels to their Flash form -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Replaces each attn.kernel by its tile function (FlashKernel.cpp) and records
// the facts the runtime descriptor needs in the module attribute
// `attn.cpu_kernels`. Expects normalized specs.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/FlashKernel.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEFLASHPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The descriptor fields of one kernel (see attnc_kernel_desc).
DictionaryAttr describe(AttentionOp op, StringRef name, int64_t blockQ) {
  Builder b(op.getContext());
  // The C ABI always takes and fills `out` (an lse-only spec too): one
  // signature for every kernel, and out costs nothing extra to write.
  int64_t outputs = 1 | (op.hasOutput(OutputKind::lse) ? 2 : 0);
  std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq();
  int64_t maxQ = maxSeq ? (*maxSeq)[0] : 0, maxKv = maxSeq ? (*maxSeq)[1] : 0;
  if (auto blocks = dyn_cast<BlockSparseMaskAttr>(op.getMask())) {
    // The layout bounds the lengths too.
    auto cover = [](int64_t bound, int64_t c) { return bound > 0 ? std::min(bound, c) : c; };
    maxQ = cover(maxQ, blocks.getNumQBlocks() * blocks.getBlockQ());
    maxKv = cover(maxKv, blocks.getNumKvBlocks() * blocks.getBlockKv());
  }
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  return b.getDictionaryAttr({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("num_heads", i64(op.getHeads())),
      b.getNamedAttr("num_kv_heads", i64(op.getKvHeads())),
      b.getNamedAttr("head_dim", i64(op.getDim())),
      b.getNamedAttr("layout", i64(static_cast<int64_t>(op.getLayout()))),
      b.getNamedAttr("outputs", i64(outputs)),
      b.getNamedAttr("block_q", i64(blockQ)),
      b.getNamedAttr("max_seq_q", i64(maxQ)),
      b.getNamedAttr("max_seq_kv", i64(maxKv)),
  });
}

struct AttnTileFlashPass
    : public mlir::attn::impl::AttnTileFlashPassBase<AttnTileFlashPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockKv <= 0 || vectorWidth <= 0 || blockKv % vectorWidth != 0 ||
        blockQ < 0) {
      module.emitError("attn-tile-flash: block-kv must be a positive multiple "
                       "of vector-width, block-q >= 0");
      return signalPassFailure();
    }
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      FlashConfig config;
      config.blockQ = blockQ ? int64_t(blockQ)
                             : defaultBlockQ(kernel.getAttention().getDim());
      config.blockKv = blockKv;
      config.vectorWidth = vectorWidth;
      config.countTiles = countTiles;
      if (failed(buildFlashKernel(kernel, config)))
        return signalPassFailure();
      kernels.push_back(describe(kernel.getAttention(), kernel.getSymName(),
                                 config.blockQ));
      kernel.erase();
    }
    module->setAttr("attn.cpu_kernels", ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
