//===- FlashMmaKernel.cpp - attn.flash as an mma.sync CUDA kernel ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One CTA computes query tile blockIdx.x of head blockIdx.y of batch
// blockIdx.z, FlashAttention-2 style:
//
//   cp.async Q tile -> shared; zero the head_dim padding columns
//   for each visited KV tile (the mask's key range, empty tiles skipped):
//     wait for its K / V tile; barrier
//     cp.async the next visited tile's K / V into the other stage
//     S = Q K^T               mma.sync m16n8k16, f32 accumulators; each warp
//                             owns 16 query rows, K read by ldmatrix
//     partial / edge tiles, or a score_mod: mods, mask, mask_mod per element
//     online softmax          row max and sum over the lane quad by shuffles
//     O = O alpha + P V       P re-used from S's registers as the A operand,
//                             V read by ldmatrix.trans
//   out = O / l, lse = m + log l; rows with l = 0 give out = 0, lse = -inf
//
// f32 runs the same way on TF32 (m16n8k8, operands rounded by cvt.rna): its
// rows stay f32 in shared memory, ldmatrix reads them as 16-bit pairs, and P V
// reads V with plain loads (FlashMmaTile.cpp). Where two KV stages do not fit
// in shared memory, one is used and the next tile loads after the compute.
//
// Rows and keys past the sequence are zero-filled by cp.async's source size,
// and their scores masked. The walk, the classification and every branch
// depend on the CTA's tile only, so barriers are never divergent.
//
//===----------------------------------------------------------------------===//

#include "FlashMmaBuilder.h"

#include "attnc/Interface/KernelInterface.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma;

MmaKernelShape MmaKernelShape::of(FlashOp op, const CudaTarget &target) {
  int64_t elemBytes = op.getDtype().getIntOrFloatBitWidth() / 8;
  if (!op.getNumSplits())
    return of(target, op.getTileQ(), op.getTileKv(), op.getDim(), elemBytes);
  int64_t rows = op.getHeads() / op.getKvHeads() * decodeMaxSeqQ(op.getMaxSeq());
  return of(decodeCudaTarget(target), decodeBlockQ(rows), op.getTileKv(), op.getDim(),
            elemBytes);
}

CudaTarget mlir::attn::decodeCudaTarget(const CudaTarget &target) {
  CudaTarget sync = target;
  sync.mma = MmaKind::sync;
  sync.mmaName = "mma.sync";
  sync.rowsPerMmaGroup = 16;
  return sync;
}

MmaKernelShape MmaKernelShape::of(const CudaTarget &target, int64_t blockQ, int64_t blockKv,
                                  int64_t dim, int64_t elemBytes) {
  MmaKind kind = target.mma;
  MmaKernelShape s;
  s.kind = kind;
  s.blockQ = blockQ;
  s.blockKv = blockKv;
  s.dim = dim;
  s.elemBytes = elemBytes;
  s.stages = 2;
  s.warps = blockQ / 16; // an m16 MMA per warp (wgmma: a warpgroup's four per m64)
  s.warpSize = target.warpSize;
  s.threads = s.warpSize * s.warps;
  if (kind == MmaKind::wgmma) {
    // TMA fills whole 64-column blocks (zeros past head_dim).
    s.dimPadded = llvm::alignTo(dim, 64);
    s.rowStride = 0;
    s.sharedBytes = s.barrierOffset(3);
    return s;
  }
  s.dimPadded = llvm::alignTo(dim, 32 / elemBytes);
  // 16 bytes of skew per row: the 8 row addresses of an ldmatrix then fall in
  // 8 different 16-byte bank groups instead of all in one.
  s.rowStride = s.dimPadded + s.perChunk();
  if (s.rows() * s.rowStride * elemBytes > target.maxSharedBytes)
    s.stages = 1;
  s.sharedBytes = s.rows() * s.rowStride * elemBytes;
  return s;
}

std::string mlir::attn::mmaKernelMisfit(FlashOp op, const CudaTarget &target) {
  Type elem = op.getDtype();
  MmaKernelShape s = MmaKernelShape::of(op, target);
  bool wgmma = s.kind == MmaKind::wgmma;
  int64_t group = wgmma ? target.rowsPerMmaGroup : 16;
  if (op.hasOutput(OutputKind::weights))
    return "it outputs 'weights', which only the MLIR CPU backend computes (compile it for "
           "a CPU target, or drop weights from its outputs)";
  if (wgmma && !elem.isBF16() && !elem.isF16())
    return "the wgmma kernel runs bf16 and f16; for f32 use cuda-sm80, whose TF32 kernel "
           "runs on Hopper too";
  if (s.dim % s.perChunk() != 0)
    return wgmma ? "head_dim must be a multiple of 8 (TMA needs 16-byte row strides)"
                 : ("head_dim must be a multiple of " + llvm::Twine(s.perChunk()) +
                    " (cp.async copies 16-byte pieces of rows)")
                       .str();
  if (s.blockQ % group != 0 || s.blockQ > 256)
    return ("block_q must be a multiple of " + llvm::Twine(group) + " up to 256 (one " +
            (wgmma ? "warpgroup" : "warp") + " per " + llvm::Twine(group) + " query rows)")
        .str();
  if (s.blockKv % target.mmaK != 0 || s.blockKv > 256)
    return ("block_kv must be a multiple of " + llvm::Twine(target.mmaK) +
            " up to 256 (the MMA's k = " + llvm::Twine(target.mmaK) + ")")
        .str();
  if (s.sharedBytes > target.maxSharedBytes)
    return ("the tiles need " + llvm::Twine(s.sharedBytes) + " bytes of shared memory, more than " +
            target.chip + "'s " + llvm::Twine(target.maxSharedBytes) +
            "; lower block_q or block_kv")
        .str();
  return "";
}

SmallVector<Value> SoftmaxState::flatten() const {
  SmallVector<Value> values(acc);
  values.append({max[0], max[1], sum[0], sum[1]});
  return values;
}

SoftmaxState SoftmaxState::unflatten(ValueRange values, int64_t accCount) {
  SoftmaxState s;
  s.acc.assign(values.begin(), values.begin() + accCount);
  s.max[0] = values[accCount], s.max[1] = values[accCount + 1];
  s.sum[0] = values[accCount + 2], s.sum[1] = values[accCount + 3];
  return s;
}

FlashMmaBuilder::FlashMmaBuilder(FlashOp op, const CudaTarget &target,
                                 gpu::GPUModuleOp module, ImplicitLocOpBuilder &b)
    : op(op), module(module), b(b), shape(MmaKernelShape::of(op, target)),
      elemType(op.getDtype()), decode(op.getNumSplits().has_value()),
      group(op.getHeads() / op.getKvHeads()) {}

/// cp.async of `rowCount` rows, row r from source(r), into shared rows from
/// smemRow, 16 bytes per copy, the CTA's threads striding over the pieces;
/// a row that does not exist is zero-filled (source size 0).
void FlashMmaBuilder::loadRows(Value buf, llvm::function_ref<RowSource(Value row)> source,
                               Value smemRow, int64_t rowCount) {
  int64_t perChunk = shape.perChunk(), perRow = shape.dim / perChunk;
  auto loop = scf::ForOp::create(b, tid, c(rowCount * perRow), c(shape.threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value piece = loop.getInductionVar();
  Value row = div(piece, perRow), col = mul(rem(piece, perRow), c(perChunk));
  RowSource from = source(row);
  Value count = select(from.exists, c(perChunk), c(0));
  nvgpu::DeviceAsyncCopyOp::create(b, smem, ValueRange{add(smemRow, row), col}, buf,
                                   ValueRange{add(from.start, col)}, b.getIndexAttr(perChunk),
                                   count, b.getUnitAttr());
}

/// The query head and position of tile row `row`: the CTA's head at q0 +
/// row, or in a decode kernel the group's heads packed (FlashMmaBuilder.h).
std::pair<Value, Value> FlashMmaBuilder::rowHeadAndPos(Value row) {
  if (!decode)
    return {head, add(q0, row)};
  Value positions = arith::MaxSIOp::create(b, seqQ, c(1)); // seq_q = 0: no row exists
  return {add(mul(kvHead, c(group)), arith::DivUIOp::create(b, row, positions)),
          arith::RemUIOp::create(b, row, positions)};
}

/// Tile row `row` of q; one past seq_q (or, decoding, past the group's
/// rows) reads from row 0 of the CTA's head.
RowSource FlashMmaBuilder::queryRow(Value row) {
  auto [headIdx, pos] = rowHeadAndPos(row);
  Value exists = decode ? lt(row, mul(c(group), seqQ)) : lt(pos, seqQ);
  Value firstHead = decode ? mul(kvHead, c(group)) : head;
  Value start = offset(qS, batch, select(exists, headIdx, firstHead), select(exists, pos, c(0)));
  return {exists, start};
}

/// Key `key` of this CTA's KV head in k or v; past seq_kv, key 0. With
/// pages, row key % page_size of page block_table[b, key / page_size] (the
/// runtime checked every entry before the launch).
RowSource FlashMmaBuilder::keyRow(const Strides &s, Value key) {
  Value exists = lt(key, seqKv);
  key = select(exists, key, c(0));
  int64_t pageSize = op.getPageSize() ? int64_t(*op.getPageSize()) : 0;
  if (pageSize <= 0)
    return {exists, offset(s, batch, kvHead, key)};
  Value slot = add(mul(batch, tableStride), div(key, pageSize));
  Value page = arith::IndexCastOp::create(b, b.getIndexType(),
                                          memref::LoadOp::create(b, blockTable, ValueRange{slot}));
  return {exists, offset(s, page, kvHead, rem(key, pageSize))};
}

/// Zeroes shared columns [head_dim, dimPadded) of every row once: cp.async
/// never writes them, and the MMAs read them as k (Q K^T) or n (P V) padding.
void FlashMmaBuilder::zeroPadding() {
  int64_t pad = shape.dimPadded - shape.dim;
  if (pad == 0)
    return;
  auto loop = scf::ForOp::create(b, tid, c(shape.rows() * pad), c(shape.threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  Value zero = arith::ConstantOp::create(b, b.getZeroAttr(elemType));
  memref::StoreOp::create(b, zero, smem, ValueRange{div(i, pad), add(c(shape.dim), rem(i, pad))});
}

void FlashMmaBuilder::loadKvTile(Value tile, Value stage) {
  Value k0 = mul(tile, c(shape.blockKv));
  Value keyDst = add(c(shape.keyRow(0)), mul(stage, c(shape.blockKv)));
  Value valueDst = add(c(shape.valueRow(0)), mul(stage, c(shape.blockKv)));
  loadRows(kBuf, [&](Value j) { return keyRow(kS, add(k0, j)); }, keyDst, shape.blockKv);
  loadRows(vBuf, [&](Value j) { return keyRow(vS, add(k0, j)); }, valueDst, shape.blockKv);
}

/// (full, empty) of KV tile `tile` for this CTA's query rows.
std::pair<Value, Value> FlashMmaBuilder::classifyKvTile(Value tile) {
  Value k0 = mul(tile, c(shape.blockKv));
  Value cols = min(c(shape.blockKv), sub(seqKv, k0));
  // A decode CTA's rows are at every query position.
  Value first = decode ? c(0) : q0;
  Value end = decode ? seqQ : add(q0, min(c(shape.blockQ), sub(seqQ, q0)));
  TileBounds<Value> bounds{first, end, k0, add(k0, cols), seqQ, seqKv};
  return emitTileClass(b, b.getLoc(), module, op.getMask(), !op.getMaskMod().empty(), bounds);
}

/// The first KV tile in [from, end) that the mask does not skip, or end.
Value FlashMmaBuilder::nextVisitedTile(Value from, Value end) {
  Type index = b.getIndexType();
  auto scan = scf::WhileOp::create(b, TypeRange{index}, ValueRange{from});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&scan.getBefore(), {}, {index}, {b.getLoc()});
  Value tile = before->getArgument(0);
  auto inRange = scf::IfOp::create(b, TypeRange{b.getI1Type()}, lt(tile, end), true, true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&inRange.getThenRegion().front());
    scf::YieldOp::create(b, classifyKvTile(tile).second);
    b.setInsertionPointToStart(&inRange.getElseRegion().front());
    scf::YieldOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 1)});
  }
  scf::ConditionOp::create(b, inRange.getResult(0), ValueRange{tile});
  Block *after = b.createBlock(&scan.getAfter(), {}, {index}, {b.getLoc()});
  scf::YieldOp::create(b, ValueRange{add(after->getArgument(0), c(1))});
  return scan.getResult(0);
}

/// out = O / l (0 where l = 0) as pairs of the element type; lse = m ln 2 +
/// log l (-inf where l = 0) from the quad's first lane. Rows past seq_q and
/// head_dim padding are not written.
void FlashMmaBuilder::writeOutputs(const SoftmaxState &state) {
  auto pairType = VectorType::get({2}, elemType);
  bool wantLse = op.hasOutput(OutputKind::lse);
  for (int half = 0; half < 2; ++half) {
    Value l = quadReduce(state.sum[half], /*isMax=*/false);
    Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32(0));
    Value inv = arith::SelectOp::create(b, empty, f32(0), arith::DivFOp::create(b, f32(1), l));
    Value row = add(add(q0, mul(warp, c(16))), add(g, c(8 * half)));
    ifThen(lt(row, seqQ), [&] {
      Value base = add(offset(outS, batch, head, row), mul(t, c(2)));
      for (int64_t n = 0; n < shape.dim / 8; ++n) {
        Value lo = vector::ExtractOp::create(b, state.acc[n], int64_t(2 * half));
        Value hi = vector::ExtractOp::create(b, state.acc[n], int64_t(2 * half + 1));
        Value pair = vector::FromElementsOp::create(
            b, pairType,
            ValueRange{toElem(arith::MulFOp::create(b, lo, inv)),
                       toElem(arith::MulFOp::create(b, hi, inv))});
        vector::StoreOp::create(b, pair, outBuf, ValueRange{add(base, c(8 * n))});
      }
      if (!wantLse)
        return;
      Value firstLane = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, c(0));
      ifThen(firstLane, [&] {
        Value m = arith::MulFOp::create(b, state.max[half], f32(0.693147180559945309));
        Value lse = arith::AddFOp::create(b, m, math::LogOp::create(b, l));
        Value negInf = f32(-std::numeric_limits<double>::infinity());
        memref::StoreOp::create(b, arith::SelectOp::create(b, empty, negInf, lse), lseBuf,
                                ValueRange{offset(lseS, batch, head, row)});
      });
    });
  }
}

/// The thread's coordinates in its warp and in the ldmatrix blocks.
void FlashMmaBuilder::bindLanes() {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  warp = div(tid, shape.warpSize), lane = rem(tid, shape.warpSize), g = div(lane, 4),
  t = rem(lane, 4);
  // ldmatrix.x4: lanes 8m .. 8m+7 address the rows of 8 x 8 matrix m.
  Value matrix = div(lane, 8), row8 = rem(lane, 8);
  qRowLane = rem(lane, 16);
  colLane16 = mul(div(lane, 16), c(8));
  kRowLane = add(row8, mul(div(lane, 16), c(8)));
  kColLane = mul(rem(matrix, 2), c(8));
  vRowLane = add(row8, kColLane);
}

/// The kernel arguments and the thread's coordinates every part uses.
void FlashMmaBuilder::bindArguments(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  auto args = entry.getArguments();
  if (shape.kind == MmaKind::wgmma) {
    qMap = args[0], kMap = args[1], vMap = args[2];
    args = args.drop_front(3);
  }
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  size_t inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  size_t firstParam = 5 + (inputs ? inputs + 1 : 0);
  auto param = [&](int64_t i) { return args[firstParam + i]; };
  auto strides = [&](int64_t first) {
    return Strides{param(first), param(first + 1), param(first + 2)};
  };
  seqQ = param(ATTNC_P_SEQ_Q), seqKv = param(ATTNC_P_SEQ_KV);
  qS = strides(ATTNC_P_Q_STRIDES), kS = strides(ATTNC_P_K_STRIDES);
  vS = strides(ATTNC_P_V_STRIDES), outS = strides(ATTNC_P_OUT_STRIDES);
  lseS = strides(ATTNC_P_LSE_STRIDES);
  if (inputs) {
    modInputs = ModInputViews(b, b.getLoc(), op, args.slice(5, inputs), param, 5);
    status = args[5 + inputs];
  }
  bindLanes();
  batch = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  head = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  kvHead = div(head, op.getHeads() / op.getKvHeads());
  q0 = mul(gpu::BlockIdOp::create(b, gpu::Dimension::x), c(shape.blockQ));
}

/// The state before the first KV tile: O = 0, m = -inf, l = 0.
SoftmaxState FlashMmaBuilder::initialState() {
  SoftmaxState init;
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({4}, b.getF32Type()), 0.0f));
  init.acc.assign(shape.dimPadded / 8, zeros);
  init.max[0] = init.max[1] = f32(-std::numeric_limits<double>::infinity());
  init.sum[0] = init.sum[1] = f32(0);
  return init;
}

/// [first, end) of the KV tiles the mask lets this CTA's rows see (a decode
/// CTA: its split's).
std::pair<Value, Value> FlashMmaBuilder::kvTileRange() {
  if (decode)
    return splitTiles();
  Value rowsHere = min(c(shape.blockQ), sub(seqQ, q0));
  auto [keyLo, keyHi] =
      emitKeyRange(b, b.getLoc(), op.getMask(), q0, add(q0, rowsHere), seqQ, seqKv);
  Value firstTile = arith::FloorDivSIOp::create(
      b, arith::MaxSIOp::create(b, keyLo, c(0)), c(shape.blockKv));
  Value endTile = arith::CeilDivSIOp::create(
      b, arith::MaxSIOp::create(b, min(keyHi, seqKv), c(0)), c(shape.blockKv));
  return {firstTile, endTile};
}

void FlashMmaBuilder::build(gpu::GPUFuncOp func) {
  bindArguments(func);
  if (shape.kind == MmaKind::wgmma)
    return buildWgmma();
  writeOutputs(walkCta());
  gpu::ReturnOp::create(b);
}

/// The mma.sync CTA from its query rows to the softmax state after its last
/// KV tile.
SoftmaxState FlashMmaBuilder::walkCta() {
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value bytes = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, workgroup));
  auto view = [&](Type elem, int64_t cols) -> Value {
    return memref::ViewOp::create(
        b, MemRefType::get({shape.rows(), cols}, elem, nullptr, workgroup), bytes, c(0),
        ValueRange{});
  };
  smem = view(elemType, shape.rowStride);
  // ldmatrix moves 16-bit elements; f32 rows are read as pairs of them.
  smem16 = shape.elemBytes == 2 ? smem : view(b.getI16Type(), 2 * shape.rowStride);

  // Prologue: the query tile and the first visited KV tile, then Q's
  // fragments (kept in registers up to kQueryInRegistersUpTo).
  zeroPadding();
  loadRows(qBuf, [&](Value row) { return queryRow(row); }, c(shape.queryRow()), shape.blockQ);
  Value firstTile, endTile; // not structured bindings: lambdas capture them
  std::tie(firstTile, endTile) = kvTileRange();
  Value first = nextVisitedTile(firstTile, endTile);
  ifThen(lt(first, endTile), [&] { loadKvTile(first, c(0)); });
  NVVM::CpAsyncCommitGroupOp::create(b);
  NVVM::CpAsyncWaitGroupOp::create(b, 0);
  gpu::BarrierOp::create(b);
  SmallVector<Value> queryFragments;
  if (chunks() <= kQueryInRegistersUpTo)
    for (int64_t chunk = 0; chunk < chunks(); ++chunk)
      llvm::append_range(queryFragments, queryFragment(c(chunk)));

  // With two stages the next tile loads while this one is computed; with
  // one, after every warp is done with it.
  bool overlap = shape.stages == 2;
  SoftmaxState last = walkKvTiles(
      first, endTile, {},
      [&](Value tile, Value stage, Value otherStage, ValueRange, const SoftmaxState &state) {
        // Tile `tile` has landed, and every warp is done with the other stage.
        NVVM::CpAsyncWaitGroupOp::create(b, 0);
        gpu::BarrierOp::create(b);
        Value next = nextVisitedTile(add(tile, c(1)), endTile);
        auto loadNext = [&] {
          ifThen(lt(next, endTile), [&] { loadKvTile(next, overlap ? otherStage : c(0)); });
          NVVM::CpAsyncCommitGroupOp::create(b);
        };
        if (overlap)
          loadNext();
        SoftmaxState after = visitTile(tile, overlap ? stage : c(0), queryFragments, state);
        if (!overlap) {
          gpu::BarrierOp::create(b);
          loadNext();
        }
        return KvStepResult{next, {}, after};
      });
  return last;
}

SoftmaxState FlashMmaBuilder::walkKvTiles(Value first, Value end, ValueRange extra,
                                          KvStep step) {
  SoftmaxState init = initialState();
  int64_t accCount = int64_t(init.acc.size()), leading = 2 + int64_t(extra.size());
  SmallVector<Value> carried{first, c(0)};
  llvm::append_range(carried, extra);
  llvm::append_range(carried, init.flatten());
  SmallVector<Type> types = llvm::to_vector(ValueRange(carried).getTypes());
  SmallVector<Location> locs(types.size(), b.getLoc());
  auto walk = scf::WhileOp::create(b, types, carried);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&walk.getBefore(), {}, types, locs);
    scf::ConditionOp::create(b, lt(before->getArgument(0), end), before->getArguments());
    Block *after = b.createBlock(&walk.getAfter(), {}, types, locs);
    auto args = after->getArguments();
    Value stage = args[1], otherStage = sub(c(1), stage);
    KvStepResult result = step(args[0], stage, otherStage, args.slice(2, extra.size()),
                               SoftmaxState::unflatten(args.drop_front(leading), accCount));
    SmallVector<Value> yielded{result.next, otherStage};
    llvm::append_range(yielded, result.extra);
    llvm::append_range(yielded, result.state.flatten());
    scf::YieldOp::create(b, yielded);
  }
  return SoftmaxState::unflatten(walk.getResults().drop_front(leading), accCount);
}

gpu::GPUFuncOp mlir::attn::buildMmaFlashKernel(FlashOp op, const CudaTarget &target,
                                               gpu::GPUModuleOp module, StringRef name) {
  MmaKind kind = target.mma;
  MLIRContext *ctx = op.getContext();
  ImplicitLocOpBuilder b(op.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto global = IntegerAttr::get(IntegerType::get(ctx, 64), 1);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, op.getDtype(), nullptr, global);
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type(), nullptr, global);
  Type i32Buf = MemRefType::get({ShapedType::kDynamic}, b.getI32Type(), nullptr, global);
  SmallVector<Type> args;
  if (kind == MmaKind::wgmma)
    args.assign(3, LLVM::LLVMPointerType::get(ctx));
  args.append({elemBuf, elemBuf, elemBuf, elemBuf, f32Buf});
  if (ArrayAttr decls = op.getInputsAttr()) {
    for (auto decl : decls.getAsRange<ModInputAttr>())
      args.push_back(decl.getElementType().isInteger() ? i32Buf : f32Buf);
    args.push_back(i32Buf); // the status word
  }
  // As many params as the kernel interface has: the one definition of their layout.
  DictionaryAttr entry = op.describeEntry(name, kDLCUDA);
  args.append(FlashOp::interfaceFromEntry(op.getLoc(), entry)->numParams, b.getIndexType());
  auto func = gpu::GPUFuncOp::create(b, name, FunctionType::get(ctx, args, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  if (kind == MmaKind::wgmma)
    func->setAttr(kTensorMapArgsAttr, b.getI64IntegerAttr(3));
  MmaKernelShape shape = MmaKernelShape::of(op, target);
  // The launch always uses this many threads: lets ptxas budget registers.
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(shape.threads), 1, 1}));
  // One CTA per SM is enough (shared memory bounds occupancy anyway): without
  // this ptxas aims for several and caps registers, spilling accumulators.
  func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  ImplicitLocOpBuilder body(op.getLoc(), ctx);
  mma::FlashMmaBuilder(op, target, module, body).build(func);
  return func;
}
