//===- FlashMmaBuilder.h - builder of the mma.sync Flash kernel -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared by FlashMmaKernel.cpp (the CTA: loads, the KV-tile walk, the
// epilogue), FlashMmaTile.cpp (one KV tile: S = Q K^T on tensor cores,
// mods and mask, online softmax, O += P V) and FlashWgmma.cpp (the sm_90a
// kernel's CTA and its two wgmma products). Private to
// lib/Conversion/AttnToNVGPU.
//
// Fragments follow PTX's m16n8k16 layouts. In a warp, lane = 4 g + t
// (g = lane / 4, t = lane % 4) holds of a 16 x 8 f32 accumulator the
// elements (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1): a vector<4xf32>,
// elements 0-1 in row g and 2-3 in row g + 8. An A operand (16 x 16) is
// four pairs, a B operand (16 x 8) two, each pair a vector<2xT>. wgmma's
// m64nNk16 gives each warp of a warpgroup 16 rows in the same layout, so
// the softmax and the epilogue serve both kernels.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_CONVERSION_ATTNTONVGPU_FLASHMMABUILDER_H
#define ATTNC_LIB_CONVERSION_ATTNTONVGPU_FLASHMMABUILDER_H

#include "attnc/Conversion/AttnToNVGPU/FlashMmaKernel.h"
#include "attnc/Conversion/Common/ModInputLoad.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn::mma {

/// (batch, head, seq) strides of one tensor, in elements.
struct Strides {
  Value batch, head, seq;
};

/// The online-softmax state a thread carries across KV tiles: its O
/// accumulators (dimPadded / 8 of them), and per row half (g, g + 8) the
/// running max (base-2 units) and its partial sum of P.
struct SoftmaxState {
  SmallVector<Value> acc;
  Value max[2], sum[2];

  SmallVector<Value> flatten() const;
  static SoftmaxState unflatten(ValueRange values, int64_t accCount);
};

/// One step of the KV-tile walk: the next tile, the values the step carries
/// to the next one, the softmax state after the tile.
struct KvStepResult {
  Value next;
  SmallVector<Value> extra;
  SoftmaxState state;
};

/// Where row `row` of a copy into shared memory starts in its tensor, and
/// whether it exists (a missing row is zero-filled; its start must still be
/// an address inside the tensor).
struct RowSource {
  Value exists, start;
};

class FlashMmaBuilder {
public:
  FlashMmaBuilder(FlashOp op, const CudaTarget &target, gpu::GPUModuleOp module,
                  ImplicitLocOpBuilder &b);
  void build(gpu::GPUFuncOp func);
  /// A split-KV decode kernel's attention phase (FlashMmaDecode.cpp).
  void buildDecode(gpu::GPUFuncOp func);

private:
  // Index arithmetic.
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value div(Value x, int64_t d) { return arith::DivUIOp::create(b, x, c(d)); }
  Value rem(Value x, int64_t d) { return arith::RemUIOp::create(b, x, c(d)); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value lt(Value x, Value y) { return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y); }
  Value select(Value cond, Value x, Value y) { return arith::SelectOp::create(b, cond, x, y); }
  Value f32(double v) { return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(float(v))); }
  Value offset(const Strides &s, Value bIdx, Value hIdx, Value row) {
    return add(add(mul(bIdx, s.batch), mul(hIdx, s.head)), mul(row, s.seq));
  }
  /// An f32 rounded to the element type (itself for f32).
  Value toElem(Value x) {
    return elemType.isF32() ? x : Value(arith::TruncFOp::create(b, elemType, x));
  }
  /// The MMA's k-steps over head_dim (32 bytes of a row each).
  int64_t chunks() const { return shape.dimPadded * shape.elemBytes / 32; }
  template <typename Fn> void ifThen(Value cond, Fn body) {
    auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    body();
  }

  // FlashMmaKernel.cpp: the CTA.
  void bindArguments(gpu::GPUFuncOp func);
  void bindLanes();
  SoftmaxState initialState();
  std::pair<Value, Value> kvTileRange();
  /// The walk over visited KV tiles, `stage` alternating 0 / 1, from `first`
  /// while tile < `end`, carrying `extra` values and the softmax state;
  /// `step` (tile, stage, other stage, extra, state) emits one tile's
  /// synchronisation, loads and work. Returns the state after the last tile.
  using KvStep = llvm::function_ref<KvStepResult(Value tile, Value stage, Value otherStage,
                                                 ValueRange extra, const SoftmaxState &state)>;
  SoftmaxState walkKvTiles(Value first, Value end, ValueRange extra, KvStep step);
  SoftmaxState walkCta();
  void loadRows(Value buf, llvm::function_ref<RowSource(Value row)> source, Value smemRow,
                int64_t rowCount);
  /// The query tile's row `row`, key `key` of k or v (strides `s`).
  RowSource queryRow(Value row);
  RowSource keyRow(const Strides &s, Value key);
  /// The query head and position of tile row `row` (the position unclamped).
  std::pair<Value, Value> rowHeadAndPos(Value row);
  void zeroPadding();
  void loadKvTile(Value tile, Value stage);
  std::pair<Value, Value> classifyKvTile(Value tile);
  Value nextVisitedTile(Value from, Value end);
  void writeOutputs(const SoftmaxState &state);

  // FlashMmaTile.cpp: one KV tile.
  SmallVector<Value> ldmatrix(Value row, Value col, bool transpose);
  Value operand(Value x);
  Value elementPair(Value fragment, int64_t e);
  Value mma(ArrayRef<Value> a, Value b0, Value b1, Value acc);
  SmallVector<Value> queryFragment(Value chunk);
  SmallVector<Value> scores(Value stage, ArrayRef<Value> queryFragments);
  /// A lane's score position: its row's query head, clamped query and key,
  /// and the key unclamped.
  struct Position {
    Value head, q, kv, key;
  };
  Position position(Value k0, Value n, int64_t e);
  Value keeps(const Position &at);
  SmallVector<Value> keepBits(Value k0, Value needed);
  SmallVector<Value> loadingKeepBits(Value k0, int64_t words);
  SmallVector<Value> scaleModsAndMask(ArrayRef<Value> s, Value k0, ArrayRef<Value> bits,
                                      Value needed);
  Value inlineMod(Region &region, ArrayRef<Value> args);
  void storePendingFailure();
  Value quadReduce(Value x, bool isMax);
  SoftmaxState softmax(SmallVector<Value> &s, const SoftmaxState &state);
  void accumulateValues(ArrayRef<Value> p, Value stage, SoftmaxState &state);
  void accumulateValuesTf32(ArrayRef<Value> p, Value stage, SoftmaxState &state);
  SoftmaxState visitTile(Value tile, Value stage, ArrayRef<Value> queryFragments,
                         const SoftmaxState &state);

  // FlashWgmma.cpp: the sm_90a kernel.
  void buildWgmma();
  Value sharedAt(int64_t offset, Value extra = {});
  void loadTma(Value map, Value dst, Value barrier, Value row, Value headIdx, int64_t rows);
  void loadKvTileTma(Value tile, Value stage);
  void waitBarrier(Value barrier, Value parity);
  Value descriptor(Value address, int64_t leadingBytes, int64_t strideBytes);
  SmallVector<Value> wgmmaScores(Value stage);
  void wgmmaAccumulateValues(ArrayRef<Value> p, Value stage, SoftmaxState &state);
  SmallVector<Value> fenceOperands(ArrayRef<Value> values);

  // FlashMmaDecode.cpp: the decode kernel's attention phase.
  void bindDecodeArguments(gpu::GPUFuncOp func);
  std::pair<Value, Value> splitTiles();
  void writePartials(const SoftmaxState &state);

  FlashOp op;
  gpu::GPUModuleOp module;
  ImplicitLocOpBuilder &b;
  MmaKernelShape shape;
  Type elemType;
  /// Q's A fragments stay in registers for the whole CTA up to this many
  /// k-steps (32 registers: head_dim 128 in 16 bits, 64 in f32); beyond it
  /// they are reloaded from shared memory per KV tile, so the O accumulators
  /// fit without spills.
  static constexpr int64_t kQueryInRegistersUpTo = 8;

  // Kernel arguments and values the pieces share (the tensor maps: wgmma).
  Value qMap, kMap, vMap, qBuf, kBuf, vBuf, outBuf, lseBuf, smem;
  /// smem as 16-bit elements, for ldmatrix (smem itself unless f32).
  Value smem16;
  Value seqQ, seqKv, batch, head, kvHead, q0, tid, warp, lane, g, t;
  /// This lane's row and column within a 16 x 16 ldmatrix.x4 block, for
  /// Q (A operand), K (B operand, two n8 tiles) and V (transposed B operand).
  Value qRowLane, kRowLane, kColLane, vRowLane, colLane16;
  Strides qS, kS, vS, outS, lseS;
  /// The tensors the mods read, and the word a load outside one sets.
  ModInputViews modInputs;
  Value status;
  /// The code of the last load outside its input since the last
  /// storePendingFailure (i32, 0 for none; null before any load).
  Value pendingFailure;

  /// A decode kernel (num_splits): its tile rows are every query head of a
  /// KV head at every position, row r = (kvHead * group + r / seq_q, r %
  /// seq_q); its KV tiles those of one split; it writes o_part and lse_part.
  bool decode = false;
  int64_t group = 1;
  Value split, kvLens, blockTable, tableStride, oPart, lsePart;
  Value oPartS[4];
  Strides lsePartS;
};

} // namespace mlir::attn::mma

#endif // ATTNC_LIB_CONVERSION_ATTNTONVGPU_FLASHMMABUILDER_H
