//===- FlashKernelBuilder.h - pieces of the CPU tile function ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The builder of one attn.flash's tile function, shared by the files that
// emit its pieces: FlashKernel.cpp (the function, the KV-tile walk, prologue
// and epilogue), FlashScores.cpp (Q^T, S^T = K Q^T, mods and masks),
// FlashMask.cpp (a partial tile's mask before its scores, and its hull),
// FlashSoftmax.cpp (the online softmax, as a pass over a tile's scores or
// fused into Q K^T) and FlashValues.cpp (acc += P V).
// Private to lib/Conversion/AttnToCPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_FLASHKERNELBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_FLASHKERNELBUILDER_H

#include "LoopBuilder.h"
#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Conversion/Common/ModInputLoad.h"
#include "attnc/Support/RegisterBlocks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <limits>

namespace mlir::attn::cpu {

using attnc::largestDivisorUpTo;

/// Independent max / sum chains in the softmax loops (block_kv is a multiple
/// of the vector width, so of 4).
constexpr int64_t kSoftmaxChains = 4;
static_assert(kSoftmaxChains % 2 == 0, "the bf16 softmax packs P in key pairs per step");

/// The fused softmax (`softmax=fused`) keeps the rows' running max m while
/// a tile's row sums of P = 2^(s - m) stay within this (so every P does); a
/// tile that rises further is computed again with the softmax pass. 2^12:
/// one key up to 12 powers of 2 above m, a whole tile of 64 up to 6.
constexpr float kFusedSumLimit = 4096.0f;

/// x (f32) rounded to `elemType` (f32, f16, bf16; nearest even), with
/// vcvtneps2bf16 where the target has AVX512-BF16 (`nativeBf16`).
Value roundFromF32(OpBuilder &b, Location loc, Value x, Type elemType, bool nativeBf16);

class FlashKernelBuilder : LoopBuilder {
public:
  FlashKernelBuilder(FlashOp op, const CpuKernelConfig &config,
                     ImplicitLocOpBuilder &b)
      : LoopBuilder(b), op(op), cfg(config), dim(op.getDim()), blockQ(op.getTileQ()),
        blockKv(op.getTileKv()), base2Scores(op.getScoreMod().empty()),
        additive(op.getAdditiveAttr()),
        dimPadded((dim + config.vectorWidth - 1) / config.vectorWidth *
                  config.vectorWidth),
        elemType(op.getDtype()),
        // The weights pass reads the f32 scores of S^T, which the bf16 dot
        // kernel does not keep.
        dot(elemType.isBF16() && config.bf16Dot && dim % 2 == 0 && config.vectorWidth == 16 &&
            !op.hasOutput(OutputKind::weights) && !additive),
        widen(!elemType.isF32() && !dot),
        scaleInSoftmax(dot && base2Scores && queryScale() > 0) {}

  void build(func::FuncOp func, StringRef counterName);

private:
  VectorType vecType() { return VectorType::get({cfg.vectorWidth}, b.getF32Type()); }
  /// A vector of the tensors' element type, as wide as vecType().
  VectorType elemVecType() { return VectorType::get({cfg.vectorWidth}, elemType); }
  /// x (scalar or vector of elemType) as f32.
  Value toF32(OpBuilder &nb, Location loc, Value x) {
    if (!widen)
      return x;
    auto vec = dyn_cast<VectorType>(x.getType());
    Type f32Type = vec ? Type(vec.clone(nb.getF32Type())) : Type(nb.getF32Type());
    return arith::ExtFOp::create(nb, loc, f32Type, x);
  }
  Value zeroVector(OpBuilder &nb, Location loc) {
    return arith::ConstantOp::create(nb, loc,
                                     DenseElementsAttr::get(vecType(), nb.getF32FloatAttr(0)));
  }
  Value stackBuffer(ArrayRef<int64_t> shape, Type elem) {
    return memref::AllocaOp::create(b, MemRefType::get(shape, elem));
  }
  /// Keys per Q K^T register block and rows per P V one: the configured
  /// sizes, or the largest below them that divide the tile.
  int64_t scoreKeyBlock() const { return largestDivisorUpTo(blockKv, cfg.qkKeys); }
  int64_t valueRowBlock() const { return largestDivisorUpTo(blockQ, cfg.pvRows); }
  /// The step of a tile's row ranges: whole vectors of rows (the softmax's)
  /// of whole P V row blocks. It divides blockQ, as both do.
  int64_t rowStep() const { return std::lcm(cfg.vectorWidth, valueRowBlock()); }
  /// Runs cfg.unroll steps of a reduction loop per iteration, the remainder
  /// in an epilogue loop whose results then replace the loop's: called after
  /// the loop's results are used.
  void unrollSteps(scf::ForOp loop) {
    if (cfg.unroll > 1)
      (void)loopUnrollByFactor(loop, cfg.unroll);
  }

  /// x (f32) rounded to the element type (nearest even).
  Value fromF32(Value x);

  // Pieces of the kernel.
  void readSequenceBounds(Value cuQ, Value cuKv, Value kvLens);
  void computeTile(StringRef counterName);
  void loadQueryTile();
  void zeroFill(Value buffer, ArrayRef<int64_t> shape);
  Value loadValue(OpBuilder &nb, Location loc, Value row, int64_t d);
  std::pair<Value, Value> classifyKvTile(Value kTile);
  Value nextVisitedTile(Value from, Value end);
  void visitTile(Value kTile, Value isFirst, Value hasNext, Value nextKvTile,
                 StringRef counterName);
  void prefetchRow(Value buf, const Strides &strides, Value headIdx, Value row);
  void prefetchValueRows(Value rowBlock, int64_t rowBlocks);
  double queryScale();
  void prefetchKeyBlock(ArrayRef<Value> keyRows);
  void widenKvTile(Value k0, Value cols);
  Value keyRowOffset(Value k0, Value lastKey, Value j);
  Value valueRowOffset(OpBuilder &nb, Location loc, Value k0, Value j);
  /// One step of a Q K^T register block: the next accumulators.
  using ScoreStep = llvm::function_ref<SmallVector<Value>(
      OpBuilder &, Location, Value step, ArrayRef<Value> keyBases, ArrayRef<Value> rowCols,
      ValueRange acc)>;
  void scoreBlocks(Value k0, Value cols, int64_t trips, Value scale, ScoreStep step,
                   bool fused = false, bool biased = false);
  void computeScores(Value k0, Value cols, bool fused = false, bool biased = false);
  using ScoreCombine = llvm::function_ref<Value(Value key, Value rows, Value acc)>;
  SmallVector<Value> scoreStep(OpBuilder &nb, Location loc, Value d, ArrayRef<Value> keyBases,
                               ArrayRef<Value> rowCols, ValueRange acc, ScoreCombine combine);
  // Additive scores (FlashAdditive.cpp).
  void loadAdditiveVector();
  void computeAdditiveScores(Value k0, Value cols, bool biased);
  Value emitTanh(OpBuilder &nb, Location loc, Value x);
  // Scores with the mask applied, and the tile's hull (FlashMaskFirst.cpp).
  bool maskFirst();
  /// Whether the softmax and P V take each vector of rows' own keys
  /// (ROWKEYS): P V's row blocks must not straddle two vectors.
  bool staircase() const { return cfg.vectorWidth % valueRowBlock() == 0; }
  void wholeTile();
  /// The keys [lo, hi) the softmax and P V take for the vector of rows
  /// holding row `row`.
  std::pair<Value, Value> vectorKeys(Value row);
  void maskedScores(Value k0, Value cols, Value full, Value elementPass);
  void storeKeepBias(Value j, ArrayRef<Value> keeps);
  void finishHull();
  void applyModsAndMask(Value q0, Value k0, Value cols, Value full);
  void applyMaskVectorized(Value k0, Value cols, Value full);
  void applyMaskModVectorized(Value k0, Value cols, Value full);
  void setStatusIf(Value failed, int32_t code);
  Value inlineMod(Region &region, ArrayRef<Value> args);
  Value plainMax(OpBuilder &nb, Location loc, Value x, Value y);
  template <typename Step>
  SmallVector<Value> foldKeys(Value lo, Value hi, Value init, Step step);
  void onlineSoftmax();
  // The fused softmax (FlashSoftmax.cpp).
  bool canFuseSoftmax() const { return cfg.fusedSoftmax && base2Scores && !dot && !additive; }
  Value fusedScores(Value k0, Value cols);
  void fusedSoftmaxBlock(ArrayRef<Value> keyRows, ArrayRef<Value> rowCols, ValueRange sums);
  Value acceptFusedTile();
  /// One step of a P V register block: the next accumulators.
  using ValueStep = llvm::function_ref<SmallVector<Value>(
      OpBuilder &, Location, Value step, ArrayRef<Value> rowIdx, int64_t d0, int64_t vecBlock,
      ValueRange acc)>;
  /// The steps [lo, hi) of P V for a vector of rows' keys [lo, hi).
  using TripRange = llvm::function_ref<std::pair<Value, Value>(Value keyLo, Value keyHi)>;
  void valueBlocks(TripRange trips, ValueStep step, bool rescale = true);
  void accumulatePV(Value k0, Value cols, bool rescale = true);
  void writeOutputs();
  void writeWeights();
  void storeWeightLanes(Value i0, Value key, Value p);
  // The bf16 dot-product path (FlashBf16Dot.cpp).
  VectorType pairVecType();
  Value broadcastPair(OpBuilder &nb, Location loc, Value buf, ValueRange at);
  void packQueryPairs();
  void computeScoresDot(Value k0, Value cols, bool biased = false);
  void packValuePairs(Value k0, Value cols);
  void storeProbabilityPair(OpBuilder &nb, Location loc, Value j, Value i, Value evenP,
                            Value oddP);
  void accumulatePVDot(Value cols);

  FlashOp op;
  CpuKernelConfig cfg;
  int64_t dim, blockQ, blockKv;
  /// Scores in units of log2(e) (log2(e) folded into the query scale): the
  /// softmax exponentiates with 2^x and saves a multiply per score. Not with
  /// a score_mod, which must see natural-unit scores.
  bool base2Scores;
  /// Additive scores (additive = @v): scale * sum_d v_d tanh(q_d + k_d). Q^T
  /// holds q unscaled and VA the head's v; the scale applies to the sums.
  bool additive;
  int64_t dimPadded;
  /// The element type of q, k, v and out. bf16 on a target with AVX512-BF16
  /// runs Q K^T and P V as bf16 dot products (`dot`, FlashBf16Dot.cpp);
  /// otherwise f16 and bf16 are widened to f32 as they are read (Q^T once per
  /// query tile; k and v once per visited KV tile into KF / VF), and
  /// everything after the loads is the f32 kernel.
  Type elemType;
  bool dot, widen;
  /// The bf16 dot kernel leaves S^T unscaled and the softmax applies the
  /// scale inside its s - m' (an FMA instead of a subtract): one multiply per
  /// score fewer. Needs base-2 scores (no score_mod) and scale > 0.
  bool scaleInSoftmax;

  ModuleOp module;
  // Function arguments and values shared by the pieces.
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, weightsBuf, batch, head, kvHead;
  ModInputViews modInputs; // the tensors the mods read
  Value q0, rows;
  /// The rows the loops compute: `rows` rounded up to rowStep() (at most
  /// blockQ). A partial query tile (a sequence's last, or a short prompt's
  /// only one) computes no more rows than that.
  Value rowsComputed;
  Strides weightsS;
  Value QT, ST, Acc, M, L, ALPHA, status, VA;
  Value TSUM; // fused softmax: the tile's row sums
  Value KF, VF; // widen: the tile's k and v rows in f32, blockKv x dimPadded
  Value QP, VP, PB; // dot: q, v and P packed in bf16 pairs (FlashBf16Dot.cpp)
  Value vBatchHead; // offset of v[batch, kvHead, 0, 0]
  // The tile's keys [keyLo, keyHi) and rows [rowLo, rowHi) that the scores,
  // softmax and P V compute: the hull of its kept elements where the mask
  // ran first (maskFirst), else the whole tile. HULL holds them between the
  // mask pass and the loops, ROWKEYS each vector of rows' keys (lo, hi;
  // staircase), KEPT each vector's kept keys while the pass folds them.
  Value keyLo, keyHi, rowLo, rowHi;
  Value HULL, ROWKEYS, KEPT;
  // Per visited tile: whether another visited tile follows, its first key, and
  // where its v rows are prefetched (its k rows are, during the scores).
  Value hasNextTile, nextK0, valuesInScores, valuesInPV;
};

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_FLASHKERNELBUILDER_H
