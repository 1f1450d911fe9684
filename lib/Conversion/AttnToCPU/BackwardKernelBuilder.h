//===- BackwardKernelBuilder.h - attn.flash_backward's CPU builder -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to AttnToCPU. The builder of a backward kernel's tile functions:
// the phases and the gradient products in BackwardKernel.cpp, a tile pair's
// P and dS (its scores, the element pass, the mask's key ranges) in
// BackwardScores.cpp, the f32 tables' gradients in BackwardInputs.cpp.
//
// The gradients of one attention, FlashAttention-2 style, in three phases
// (KernelInterface.h, backwardInterface), and one more per f32 mod input:
//
//   delta, item (b, h, q_tile): D = rowsum(d_out * out) - d_lse of the tile's
//     rows (d_lse: lse's gradient, where given).
//   dkdv, item (b, g, chunk): for the KV tiles chunk, chunk + chunks, ... of
//     KV head g, the tile's k and v (f32: KF rows, KT and VT columns), then for
//     every query head of g and every query tile the mask does not empty, the
//     tile pair: P = exp(s - lse) recomputed, dP = d_out V^T, dS = P (dP - D)
//     (times score_mod'), dV += P^T d_out, dK += dS^T Q, and the chunk's own
//     dq partial += dS K. dk and dv rows are written once per KV tile.
//   dq, item (b, h, q_tile): dq = scale * sum of the chunks' partials, added
//     in chunk order; so the result does not depend on the thread count.
//   d_<name>, item i of the input's first dim: its gradient, the dkdv items'
//     shares (each item's own copy) summed in item order (BackwardInputs.h).
//
// Within a tile pair the scores run along the vector lanes by key (S is
// rows x keys): the five products are outer products of a broadcast operand
// and a row of vectors, each register-blocked (rows or keys x vectors of
// keys or head_dim) over its reduction (head_dim, rows or keys). The query
// tile's q and d_out are read once per pair into f32 rows (QF, DOF; rows
// past seq_q are 0), with their D beside them, so every loop runs over whole
// tiles. P is 2^(s log2 e - lse log2 e). Without mods and with a window
// mask (maskInBlock) every tile takes it in the score block, masked on
// vectors of keys, and the register blocks outside each block of rows' key
// range (the mask's rule) are skipped; otherwise full tiles without a
// score_mod take it there and the others in an element pass that applies the
// mask, the mask_mod, the score_mod and its derivative (InlineModSlope).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDKERNELBUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDKERNELBUILDER_H

#include "BackwardInputs.h"
#include "FlashKernelBuilder.h"
#include "LoopBuilder.h"
#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Conversion/Common/ModInputLoad.h"
#include "attnc/Transforms/TileClassifier.h"

#include <optional>

namespace mlir::attn::cpu {

class BackwardKernelBuilder : VectorLoopBuilder {
public:
  static constexpr double kLog2e = 1.44269504088896341;

  BackwardKernelBuilder(FlashBackwardOp op, const CpuKernelConfig &config,
                        ImplicitLocOpBuilder &b)
      : VectorLoopBuilder(b, config.vectorWidth), op(op), cfg(config), dim(op.getDim()),
        dimPadded((dim + w - 1) / w * w), blockQ(op.getTileQ()), blockKv(op.getTileKv()),
        group(op.getHeads() / op.getKvHeads()), chunks(op.getChunks()),
        elemType(op.getDtype()), scoreMod(!op.getScoreMod().empty()),
        // The P V register block of the forward kernel (RegisterBlocks.h): 6
        // rows x 2 vectors on 16 registers, 4 x 4 on 32.
        blockRows(config.pvRows), blockVectors(config.pvVectors) {}

  void buildDelta(func::FuncOp func);
  void buildKeyValue(func::FuncOp func);
  void buildQuery(func::FuncOp func);
  void buildInputSum(func::FuncOp func, size_t table);

private:
  /// Where row (head, pos)'s D is in delta.
  Value deltaAt(Value head, Value pos) {
    return add(add(mul(batch, deltaS[0]), mul(head, deltaS[1])), pos);
  }
  /// dq_part's row (head, pos) of this item's chunk.
  Value partRow(Value head, Value chunk, Value pos) {
    return add(add(add(mul(batch, partS[0]), mul(head, partS[1])), mul(chunk, partS[2])),
               mul(pos, partS[3]));
  }

  ArrayRef<BlockArgument> readCommon(ArrayRef<BlockArgument> args);
  void fail(OpBuilder &nb, int32_t code);
  Value loadInput(Operation *load, ArrayRef<Value> indices);
  Value loadRow(Value buf, Value base, int64_t d);
  void storeScalars(Value x, Value buf, Value base, int64_t d, Value factor);
  using Broadcast = llvm::function_ref<Value(int64_t a, Value l)>;
  using Lanes = llvm::function_ref<Value(int64_t c, Value l)>;
  template <typename Fn> void registerBlocks(int64_t extent, int64_t vectors, Fn fn);
  using KeyVector = llvm::function_ref<void(Value row, ArrayRef<Value> at, Value sum)>;
  void keyProducts(Value rowsOf, Value columns, Value target, KeyVector done);
  void storeKeyRanges(Value q0, Value k0);
  std::pair<Value, Value> keyRangeOf(Value i0);
  std::pair<Value, Value> rowRangeOf(Value keyLo, Value keyHi);
  /// init[a][c] + the sum over l in [lo, hi) of x(a, l) * y(c, l), a <
  /// rowsIn, c < vecsIn: one register block, its accumulators in registers.
  SmallVector<Value> outerProducts(int64_t rowsIn, int64_t vecsIn, Value lo, Value hi,
                                   Broadcast x, Lanes y, SmallVector<Value> init);
  void zeroPartials(Value chunk);
  void loadKvTile(Value k0, Value cols);
  void loadQueryTile(Value head, Value q0, Value rows);
  void scoreBlocks(Value fused, Value q0, Value k0);
  /// Whether partial tiles take the mask attribute on vectors of keys in the
  /// score block (a window mask, no mods), with no element pass.
  bool maskInBlock() {
    return !scoreMod && op.getMaskMod().empty() && canEmitMaskKeepsVector(op.getMask());
  }
  void elementPass(Value head, Value q0, Value rows, Value k0, Value cols, Value full);
  void gradientScores();
  void keyGradients(Value acc, Value weights, Value rowsOf);
  void queryGradients(Value head, Value chunk, Value q0, Value rows);
  void inputPass(Value chunk, Value rows, Value cols);
  void visitPair(Value head, Value chunk, Value q0, Value k0, Value cols);
  void writeKeyRows(Value k0, Value cols);

  FlashBackwardOp op;
  CpuKernelConfig cfg;
  int64_t dim, dimPadded, blockQ, blockKv, group, chunks;
  Type elemType;
  bool scoreMod;
  int64_t blockRows, blockVectors;
  ModuleOp module;
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, doBuf, dLseBuf, dqBuf, dkBuf, dvBuf, partBuf, deltaBuf;
  Value batch, kvHead, status;
  ModInputViews modInputs; // the tensors the mods read
  std::optional<InputGradients> tables; // the f32 ones, whose gradients are computed
  Strides doS, dqS, dkS, dvS;
  Value partS[4], deltaS[2];
  /// Per KV tile (f32, zero past seq_kv and head_dim): KF k's rows, KT and
  /// VT k's and v's columns; DK and DV the tile's gradient rows.
  Value KF, KT, VT, DK, DV;
  /// Per tile pair: QF, DOF q's and d_out's rows (zero past seq_q), D the
  /// rows' rowsum(d_out * out) (from delta), LS their lse in log2 units (+inf where the
  /// row is past seq_q or keeps nothing: P = 0), PS P then (in the element
  /// pass) raw scores, DS dS, SL score_mod's derivative; where the score_mod
  /// reads an f32 input, GS = P (dP - D).
  Value QF, DOF, D, LS, PS, DS, SL, GS;
  /// maskInBlock kernels, per pair: each row block's kept key range, and
  /// each key block's rows (storeKeyRanges).
  Value RK, RR;
};


/// fn(i0, rows, c0, vecs) for every register block of `extent` broadcast
/// rows (blockRows at a time, the last block what remains) x `vectors`
/// vectors (blockVectors at a time, the last group what remains).
template <typename Fn>
void BackwardKernelBuilder::registerBlocks(int64_t extent, int64_t vectors, Fn fn) {
  int64_t whole = extent / blockRows * blockRows;
  auto groups = [&](Value i0, int64_t rows) {
    for (int64_t c0 = 0; c0 < vectors; c0 += blockVectors)
      fn(i0, rows, c0, std::min(blockVectors, vectors - c0));
  };
  if (whole)
    loop(0, whole, blockRows, [&](Value i0) { groups(i0, blockRows); });
  if (extent > whole)
    groups(idx(whole), extent - whole);
}

} // namespace mlir::attn::cpu

#endif // ATTNC_LIB_CONVERSION_ATTNTOCPU_BACKWARDKERNELBUILDER_H
