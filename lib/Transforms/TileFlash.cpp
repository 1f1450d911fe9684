//===- TileFlash.cpp - attn-tile-flash: attn.attention to attn.flash ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The seam between the spec and the backends: each normalized attn.attention
// becomes an attn.flash with the same parameters and regions plus tile sizes.
// No target fact enters here; every backend lowers attn.flash.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/Passes.h"
#include "attnc/Transforms/TileSizes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEFLASHPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

int64_t mlir::attn::defaultBlockQ(int64_t headDim, bool gpu) {
  if (gpu)
    return headDim > 128 ? 8 : 16;
  return headDim > 128 ? 32 : 64;
}

namespace {

/// attn.flash with `op`'s parameters, tile sizes, and its regions moved over.
LogicalResult tile(AttentionOp op, int64_t blockQ, int64_t blockQMultiple, int64_t blockKv,
                   bool gpu, bool tensorCores) {
  if (!op.getScaleAttr() || !op.getNumKvHeadsAttr() || isa<CausalMaskAttr>(op.getMask()))
    return op.emitOpError("expects a normalized spec; run attn-normalize first");
  if (op.hasOutput(OutputKind::weights))
    return op.emitOpError("output 'weights' is only produced by the reference "
                          "evaluator (attnc-run --reference)");
  OpBuilder b(op);
  auto flash =
      FlashOp::create(b, op.getLoc(), op.getNumHeadsAttr(), op.getNumKvHeadsAttr(),
                      op.getHeadDimAttr(), op.getDtypeAttr(), op.getLayoutAttr(), op.getMask(),
                      op.getScaleAttr(), op.getMaxSeqAttr(), op.getOutputsAttr(),
                      b.getI64IntegerAttr(resolveBlockQ(blockQ, op.getDim(), gpu, blockQMultiple)),
                      b.getI64IntegerAttr(resolveBlockKv(
                          blockKv, op.getDtype().getIntOrFloatBitWidth() / 8, tensorCores)));
  flash.getScoreMod().takeBody(op.getScoreMod());
  flash.getMaskMod().takeBody(op.getMaskMod());
  op.erase();
  return success();
}

struct AttnTileFlashPass
    : public mlir::attn::impl::AttnTileFlashPassBase<AttnTileFlashPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockQ < 0 || blockKv < 0 || blockQMultiple < 1) {
      module.emitError("attn-tile-flash: block-q must be >= 0 (0: by head_dim), "
                       "block-kv >= 0 (0: by dtype) and block-q-multiple >= 1, got ")
          << int64_t(blockQ) << ", " << int64_t(blockKv) << " and " << int64_t(blockQMultiple);
      return signalPassFailure();
    }
    for (KernelOp kernel : module.getOps<KernelOp>())
      if (AttentionOp op = kernel.getAttention())
        if (failed(tile(op, blockQ, blockQMultiple, blockKv, gpu, tensorCores)))
          return signalPassFailure();
  }
};

} // namespace
