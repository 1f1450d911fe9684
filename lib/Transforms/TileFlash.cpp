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

#include <algorithm>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEFLASHPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `OpT` (attn.flash or attn.flash_backward) with `op`'s parameters, then
/// `tiles`, and its regions moved over.
template <typename OpT, typename... Tiles>
void replaceWith(AttentionOp op, Tiles... tiles) {
  OpBuilder b(op);
  auto tiled =
      OpT::create(b, op.getLoc(), op.getNumHeadsAttr(), op.getNumKvHeadsAttr(),
                  op.getHeadDimAttr(), op.getDtypeAttr(), op.getLayoutAttr(), op.getMask(),
                  op.getScaleAttr(), op.getMaxSeqAttr(), op.getOutputsAttr(),
                  op.getNumSplitsAttr(), op.getPageSizeAttr(), op.getPagesHeadMajorAttr(),
                  op.getVarlenAttr(), op.getInputsAttr(), op.getAdditiveAttr(),
                  b.getI64IntegerAttr(tiles)...);
  tiled.getScoreMod().takeBody(op.getScoreMod());
  tiled.getMaskMod().takeBody(op.getMaskMod());
  op.erase();
}

/// The tiled form of `op`: attn.flash, or for gradients attn.flash_backward.
LogicalResult tile(AttentionOp op, int64_t blockQ, int64_t blockKv, int64_t chunks,
                   const TileRule &rule) {
  if (!op.getScaleAttr() || !op.getNumKvHeadsAttr() || isa<CausalMaskAttr>(op.getMask()))
    return op.emitOpError("expects a normalized spec; run attn-normalize first");
  int64_t q = resolveBlockQ(blockQ, op.getDim(), rule);
  std::optional<DecodeTile> decode;
  if (op.getNumSplits())
    decode = DecodeTile{op.getDim(), op.getDtype().isBF16()};
  int64_t kv = resolveBlockKv(blockKv, op.getDtype().getIntOrFloatBitWidth() / 8, rule, decode);
  if (op.hasOutput(OutputKind::dq))
    replaceWith<FlashBackwardOp>(op, q, kv, chunks ? chunks : kDefaultKvChunks);
  else
    replaceWith<FlashOp>(op, q, kv);
  return success();
}

struct AttnTileFlashPass
    : public mlir::attn::impl::AttnTileFlashPassBase<AttnTileFlashPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TileRule rule{autoBlockQ,  autoBlockQLargeHead, blockQMultiple,
                  autoBlockKv, autoBlockKvF32,      autoDecodeWidenedBytes};
    int64_t leastRule = std::min({rule.blockQ, rule.blockQLargeHead, rule.blockQMultiple,
                                  rule.blockKv, rule.blockKvF32});
    if (blockQ < 0 || blockKv < 0 || kvChunks < 0 || leastRule < 1) {
      module.emitError("attn-tile-flash: block-q, block-kv and kv-chunks must be >= 0 (0: "
                       "automatic), the automatic sizes and block-q-multiple >= 1; got "
                       "block-q ")
          << int64_t(blockQ) << ", block-kv " << int64_t(blockKv) << ", kv-chunks "
          << int64_t(kvChunks) << " and a rule value of " << leastRule;
      return signalPassFailure();
    }
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      AttentionOp op = kernel.getAttention();
      // A multi-head attention's own attention, in its body.
      Block &body = kernel.getBody().front();
      if (auto mha = dyn_cast_or_null<MultiHeadAttentionOp>(body.empty() ? nullptr : &body.front()))
        op = dyn_cast<AttentionOp>(mha.getAttention().getOperation());
      if (op && failed(tile(op, blockQ, blockKv, kvChunks, rule)))
        return signalPassFailure();
    }
  }
};

} // namespace
