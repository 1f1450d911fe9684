//===- FlashMmaTile.cpp - one KV tile of the mma.sync Flash kernel --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a warp does with one KV tile (FlashMmaBuilder.h has the fragment
// layouts): its 16 rows of S = Q K^T on mma.sync, scores scaled into base-2
// units (mods see natural units), masked per element only where the tile
// needs it, the online softmax with quad shuffles, and O += P V with P's
// accumulators repacked as the A operand in registers (no shared memory);
// on TF32, with the keys of each k-step permuted so that no repacking is
// needed (accumulateValuesTf32).
//
//===----------------------------------------------------------------------===//

#include "FlashMmaBuilder.h"

#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma;

static constexpr double kLog2e = 1.44269504088896341;

/// Four 8 x 8 matrices of 16-bit elements of shared memory, this lane
/// addressing row `row`, column `col` (16-bit units): four pairs
/// (vector<2xT>, T = i16 for f32 data: one f32 per pair), matrix i's in pair i.
SmallVector<Value> FlashMmaBuilder::ldmatrix(Value row, Value col, bool transpose) {
  Type half = shape.elemBytes == 2 ? elemType : b.getI16Type();
  auto type = VectorType::get({4, 2}, half);
  Value all = nvgpu::LdMatrixOp::create(b, type, smem16, ValueRange{row, col}, transpose, 4);
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < 4; ++i)
    pairs.push_back(vector::ExtractOp::create(b, all, i));
  return pairs;
}

/// An MMA operand register: an f16 pair as it is; a bf16 pair, or an f32 (a
/// pair of i16, or the f32 itself), as i32, f32 rounded to TF32 (nearest,
/// ties away: what cuBLAS does).
Value FlashMmaBuilder::operand(Value x) {
  if (elemType.isF16())
    return x;
  Type i32 = b.getI32Type();
  if (isa<VectorType>(x.getType())) {
    Value bits = vector::BitCastOp::create(b, VectorType::get({1}, i32), x);
    x = vector::ExtractOp::create(b, bits, int64_t(0));
  }
  if (!elemType.isF32())
    return x;
  if (x.getType() == i32)
    x = arith::BitcastOp::create(b, b.getF32Type(), x);
  return NVVM::ConvertFloatToTF32Op::create(b, i32, x, NVVM::FPRoundingMode::RNA);
}

/// Elements e and e + 1 of an f32 fragment rounded to the element type, as a
/// vector<2xT>: half of a 16-bit A operand register.
Value FlashMmaBuilder::elementPair(Value fragment, int64_t e) {
  Value lo = toElem(vector::ExtractOp::create(b, fragment, e));
  Value hi = toElem(vector::ExtractOp::create(b, fragment, e + 1));
  return vector::FromElementsOp::create(b, VectorType::get({2}, elemType), ValueRange{lo, hi});
}

/// acc + A B on one m16n8k16 tile (TF32: m16n8k8): a is four operands,
/// (b0, b1) two, each as `operand` makes it.
Value FlashMmaBuilder::mma(ArrayRef<Value> a, Value b0, Value b1, Value acc) {
  SmallVector<Value> cOps;
  for (int64_t i = 0; i < 4; ++i)
    cOps.push_back(vector::ExtractOp::create(b, acc, i));
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  NVVM::MMATypes type = elemType.isF32()    ? NVVM::MMATypes::tf32
                        : elemType.isBF16() ? NVVM::MMATypes::bf16
                                            : NVVM::MMATypes::f16;
  int64_t k = 32 / shape.elemBytes;
  Value d = NVVM::MmaOp::create(b, resultType, a, ValueRange{b0, b1}, cOps,
                                ArrayRef<int64_t>{16, 8, k}, std::nullopt, std::nullopt,
                                std::array<NVVM::MMATypes, 2>{type, type},
                                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                                                NVVM::MMALayout::col});
  SmallVector<Value> elems;
  for (int64_t i = 0; i < 4; ++i)
    elems.push_back(LLVM::ExtractValueOp::create(b, d, i));
  return vector::FromElementsOp::create(b, acc.getType(), elems);
}

/// The A fragment of this warp's 16 query rows, k-step `chunk` (32 bytes of
/// head_dim), as MMA operands.
SmallVector<Value> FlashMmaBuilder::queryFragment(Value chunk) {
  Value row = add(c(shape.queryRow()), add(mul(warp, c(16)), qRowLane));
  SmallVector<Value> pairs =
      ldmatrix(row, add(mul(chunk, c(16)), colLane16), /*transpose=*/false);
  return llvm::map_to_vector(pairs, [&](Value pair) { return operand(pair); });
}

/// S = Q K^T for this warp's rows and the tile's keys: blockKv / 8
/// accumulators, n-tile j holding keys [8 j, 8 j + 8).
SmallVector<Value> FlashMmaBuilder::scores(Value stage, ArrayRef<Value> queryFragments) {
  Value zeros = arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({4}, b.getF32Type()), 0.0f));
  SmallVector<Value> s(shape.blockKv / 8, zeros);
  Value keyBase = add(add(c(shape.keyRow(0)), mul(stage, c(shape.blockKv))), kRowLane);
  for (int64_t chunk = 0; chunk < chunks(); ++chunk) {
    SmallVector<Value> a = queryFragments.empty()
                               ? queryFragment(c(chunk))
                               : SmallVector<Value>(queryFragments.slice(4 * chunk, 4));
    Value col = add(c(16 * chunk), kColLane);
    for (int64_t pair = 0; pair < shape.blockKv / 16; ++pair) {
      SmallVector<Value> k = ldmatrix(add(keyBase, c(16 * pair)), col, /*transpose=*/false);
      s[2 * pair] = mma(a, operand(k[0]), operand(k[1]), s[2 * pair]);
      s[2 * pair + 1] = mma(a, operand(k[2]), operand(k[3]), s[2 * pair + 1]);
    }
  }
  return s;
}

/// A score_mod / mask_mod body inlined; a zero divisor divides by 1 (only
/// a kernel with mod inputs has a status word). Loads are branch-free: an
/// index outside its input loads element 0 and sets pendingFailure to the
/// code naming the input, which storePendingFailure writes.
Value FlashMmaBuilder::inlineMod(Region &region, ArrayRef<Value> args) {
  auto load = [&](Operation *op, ArrayRef<Value> indices) {
    auto typed = cast<LoadOp>(op);
    auto [value, inside] = modInputs.clampedLoad(b, b.getLoc(), typed, indices);
    Value code = arith::ConstantIntOp::create(
        b, ATTNC_ITEM_INDEX_FAILURE + modInputs.argOf(typed.getInput()), 32);
    Value before = pendingFailure ? pendingFailure : arith::ConstantIntOp::create(b, 0, 32);
    pendingFailure = arith::SelectOp::create(b, inside, before, code);
    return value;
  };
  return attn::inlineMod(b, b.getLoc(), region, args, nullptr, load);
}

/// The status word gets the pending failure, if a load had one (any
/// thread's store: they all name an input outside of which it loaded).
void FlashMmaBuilder::storePendingFailure() {
  if (!pendingFailure)
    return;
  Value failed = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, pendingFailure,
                                       arith::ConstantIntOp::create(b, 0, 32));
  Value code = pendingFailure;
  ifThen(failed, [&] { memref::StoreOp::create(b, code, status, ValueRange{c(0)}); });
  pendingFailure = {};
}

/// The (query, key) position of element e of S's accumulator n in this lane,
/// clamped into the sequences as the mask and mods see it: rows past seq_q
/// are never stored and keys past seq_kv are dropped anyway, and clamped,
/// block tables are never indexed past their end. `key` is the unclamped key.
FlashMmaBuilder::Position FlashMmaBuilder::position(Value k0, Value n, int64_t e) {
  auto [headIdx, pos] = rowHeadAndPos(add(mul(warp, c(16)), add(g, c(8 * (e / 2)))));
  Value key = add(k0, add(mul(t, c(2)), add(mul(n, c(8)), c(e % 2))));
  if (decode) // a padding row's head is past the group's: take its last
    headIdx = min(headIdx, add(mul(kvHead, c(group)), c(group - 1)));
  return {headIdx, min(pos, sub(seqQ, c(1))), min(key, sub(seqKv, c(1))), key};
}

/// Whether the mask, mask_mod and the sequence's end keep position `at`.
Value FlashMmaBuilder::keeps(const Position &at) {
  Value keep = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), at.q, at.kv, seqQ, seqKv);
  keep = arith::AndIOp::create(b, keep, lt(at.key, seqKv));
  if (!op.getMaskMod().empty())
    keep = arith::AndIOp::create(b, keep,
                                 inlineMod(op.getMaskMod(), {batch, at.head, at.q, at.kv}));
  return keep;
}

/// This lane's keep bits for KV tile k0 (element e of accumulator n is bit
/// 4n + e, in 32-bit words), evaluated where the tile needs it (partial, or
/// past seq_kv) and all set elsewhere. Computed before the scores, so the
/// mask's arithmetic never competes with S's accumulators for registers.
SmallVector<Value> FlashMmaBuilder::keepBits(Value k0, Value needed) {
  int64_t words = llvm::divideCeil(shape.blockKv / 2, 32);
  SmallVector<Type> types(words, b.getI32Type());
  auto branch = scf::IfOp::create(b, types, needed, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  SmallVector<Value> bits(words, arith::ConstantIntOp::create(b, 0, 32));
  if (!modInputs.empty()) {
    scf::YieldOp::create(b, loadingKeepBits(k0, words));
  } else {
    for (int64_t i = 0; i < shape.blockKv / 2; ++i) {
      Value keep = keeps(position(k0, c(i / 4), i % 4));
      Value bit = arith::ShLIOp::create(b, arith::ExtUIOp::create(b, b.getI32Type(), keep),
                                        arith::ConstantIntOp::create(b, i % 32, 32));
      bits[i / 32] = arith::OrIOp::create(b, bits[i / 32], bit);
    }
    scf::YieldOp::create(b, bits);
  }
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  scf::YieldOp::create(
      b, SmallVector<Value>(words, arith::ConstantIntOp::create(b, -1, 32)));
  return SmallVector<Value>(branch.getResults());
}

/// keepBits for a mask_mod that loads inputs: a loop over the lane's
/// accumulators (4 elements each), not unrolled, so that the loads of one
/// accumulator's keys are in flight at a time, not a tile's (otherwise
/// head_dim 128 spills on sm_80); a load outside its input is stored per
/// accumulator.
SmallVector<Value> FlashMmaBuilder::loadingKeepBits(Value k0, int64_t words) {
  SmallVector<Value> bits;
  int64_t accumulators = shape.blockKv / 8;
  for (int64_t w = 0; w < words; ++w) {
    int64_t first = 8 * w, count = std::min<int64_t>(8, accumulators - first);
    Value zero = arith::ConstantIntOp::create(b, 0, 32);
    auto loop = scf::ForOp::create(b, c(0), c(count), c(1), ValueRange{zero});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value local = loop.getInductionVar(), word = loop.getRegionIterArgs()[0];
    Value n = add(local, c(first));
    Value shift = arith::IndexCastOp::create(b, b.getI32Type(), mul(local, c(4)));
    for (int64_t e = 0; e < 4; ++e) {
      Value keep = arith::ExtUIOp::create(b, b.getI32Type(), keeps(position(k0, n, e)));
      Value at = arith::AddIOp::create(b, shift, arith::ConstantIntOp::create(b, e, 32));
      word = arith::OrIOp::create(b, word, arith::ShLIOp::create(b, keep, at));
    }
    storePendingFailure();
    scf::YieldOp::create(b, word);
    bits.push_back(loop.getResult(0));
  }
  return bits;
}

/// The scores in base-2 units, -inf where `bits` drops them: with a
/// score_mod, element by element (the mod sees natural units and positions);
/// otherwise one multiply each, and the bits applied only where `needed`.
SmallVector<Value> FlashMmaBuilder::scaleModsAndMask(ArrayRef<Value> s, Value k0,
                                                     ArrayRef<Value> bits, Value needed) {
  double scale = op.getScaleAttr().getValueAsDouble();
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  auto masked = [&](bool withMod) {
    SmallVector<Value> result;
    for (auto [n, acc] : llvm::enumerate(s)) {
      SmallVector<Value> elems;
      for (int64_t e = 0; e < 4; ++e) {
        int64_t i = 4 * int64_t(n) + e;
        Value x = vector::ExtractOp::create(b, acc, e);
        if (withMod) {
          Position at = position(k0, c(int64_t(n)), e);
          x = inlineMod(op.getScoreMod(), {arith::MulFOp::create(b, x, f32(scale)), batch,
                                           at.head, at.q, at.kv});
          x = arith::MulFOp::create(b, x, f32(kLog2e));
        } else {
          x = arith::MulFOp::create(b, x, f32(scale * kLog2e));
        }
        Value bit = arith::AndIOp::create(
            b, arith::ShRUIOp::create(b, bits[i / 32], arith::ConstantIntOp::create(b, i % 32, 32)),
            arith::ConstantIntOp::create(b, 1, 32));
        Value keep = arith::TruncIOp::create(b, b.getI1Type(), bit);
        elems.push_back(arith::SelectOp::create(b, keep, x, negInf));
      }
      result.push_back(vector::FromElementsOp::create(b, acc.getType(), elems));
    }
    storePendingFailure();
    return result;
  };
  if (!op.getScoreMod().empty())
    return masked(true);
  SmallVector<Type> types(s.size(), s[0].getType());
  auto branch = scf::IfOp::create(b, types, needed, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  scf::YieldOp::create(b, masked(false));
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  Value factor = arith::ConstantOp::create(
      b, DenseElementsAttr::get(cast<VectorType>(s[0].getType()), float(scale * kLog2e)));
  scf::YieldOp::create(b, llvm::map_to_vector(s, [&](Value x) -> Value {
                         return arith::MulFOp::create(b, x, factor);
                       }));
  return SmallVector<Value>(branch.getResults());
}

/// x reduced over the four lanes of a quad (the lanes holding one row).
Value FlashMmaBuilder::quadReduce(Value x, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, x, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    x = isMax ? Value(arith::MaxNumFOp::create(b, x, other))
              : Value(arith::AddFOp::create(b, x, other));
  }
  return x;
}

/// The online softmax step: s becomes P = 2^(s - m'), the state's max, sum
/// (this lane's share; the quad's are added at the end) and accumulators are
/// rescaled by 2^(m - m').
SoftmaxState FlashMmaBuilder::softmax(SmallVector<Value> &s, const SoftmaxState &state) {
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  SoftmaxState next;
  Value safeMax[2], alpha[2];
  for (int half = 0; half < 2; ++half) {
    Value rowMax = negInf;
    for (Value acc : s)
      for (int64_t e = 2 * half; e < 2 * half + 2; ++e)
        rowMax = arith::MaxNumFOp::create(b, rowMax, vector::ExtractOp::create(b, acc, e));
    next.max[half] = arith::MaxNumFOp::create(b, state.max[half], quadReduce(rowMax, true));
    // A row with nothing kept so far keeps m = -inf; subtract 0 then, not -inf.
    Value none = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, next.max[half], negInf);
    safeMax[half] = arith::SelectOp::create(b, none, f32(0), next.max[half]);
    alpha[half] = math::Exp2Op::create(b, arith::SubFOp::create(b, state.max[half], safeMax[half]));
  }
  Value rowSum[2] = {f32(0), f32(0)};
  for (Value &acc : s) {
    SmallVector<Value> p;
    for (int64_t e = 0; e < 4; ++e) {
      Value x = vector::ExtractOp::create(b, acc, e);
      p.push_back(math::Exp2Op::create(b, arith::SubFOp::create(b, x, safeMax[e / 2])));
      rowSum[e / 2] = arith::AddFOp::create(b, rowSum[e / 2], p.back());
    }
    acc = vector::FromElementsOp::create(b, acc.getType(), p);
  }
  Value scale = vector::FromElementsOp::create(
      b, VectorType::get({4}, b.getF32Type()), ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
  for (int half = 0; half < 2; ++half)
    next.sum[half] = arith::AddFOp::create(
        b, arith::MulFOp::create(b, state.sum[half], alpha[half]), rowSum[half]);
  next.acc = llvm::map_to_vector(state.acc, [&](Value acc) -> Value {
    return arith::MulFOp::create(b, acc, scale);
  });
  return next;
}

/// O += P V: P's accumulators for keys [16 j, 16 j + 16) are, rounded to
/// the element type, exactly the A fragment of that k-chunk.
void FlashMmaBuilder::accumulateValues(ArrayRef<Value> p, Value stage, SoftmaxState &state) {
  if (elemType.isF32())
    return accumulateValuesTf32(p, stage, state);
  auto pack = [&](Value acc, int64_t e) { return operand(elementPair(acc, e)); };
  Value valueBase = add(add(c(shape.valueRow(0)), mul(stage, c(shape.blockKv))), vRowLane);
  for (int64_t chunk = 0; chunk < shape.blockKv / 16; ++chunk) {
    Value lo = p[2 * chunk], hi = p[2 * chunk + 1];
    SmallVector<Value> a{pack(lo, 0), pack(lo, 2), pack(hi, 0), pack(hi, 2)};
    Value row = add(valueBase, c(16 * chunk));
    for (int64_t pair = 0; pair < shape.dimPadded / 16; ++pair) {
      SmallVector<Value> v = ldmatrix(row, add(c(16 * pair), colLane16), /*transpose=*/true);
      state.acc[2 * pair] = mma(a, operand(v[0]), operand(v[1]), state.acc[2 * pair]);
      state.acc[2 * pair + 1] = mma(a, operand(v[2]), operand(v[3]), state.acc[2 * pair + 1]);
    }
  }
}

/// O += P V on TF32 (m16n8k8): the A fragment wants columns t and t + 4 of
/// P where this lane holds 2t and 2t + 1, so the k-step's keys are taken in
/// the order 0, 2, 4, 6, 1, 3, 5, 7 (k = t is key 2t, k = t + 4 key 2t + 1):
/// P's registers are then the A fragment as they are, and B reads V's rows
/// in the same order (ldmatrix.trans cannot transpose 32-bit elements, so
/// two plain loads; with the 16-byte row skew, 32 lanes hit 32 banks).
void FlashMmaBuilder::accumulateValuesTf32(ArrayRef<Value> p, Value stage,
                                           SoftmaxState &state) {
  Value valueBase = add(add(c(shape.valueRow(0)), mul(stage, c(shape.blockKv))), mul(t, c(2)));
  for (int64_t chunk = 0; chunk < shape.blockKv / 8; ++chunk) {
    auto at = [&](int64_t e) { return operand(vector::ExtractOp::create(b, p[chunk], e)); };
    SmallVector<Value> a{at(0), at(2), at(1), at(3)};
    Value row = add(valueBase, c(8 * chunk));
    for (int64_t n = 0; n < shape.dimPadded / 8; ++n) {
      Value col = add(g, c(8 * n));
      Value b0 = memref::LoadOp::create(b, smem, ValueRange{row, col});
      Value b1 = memref::LoadOp::create(b, smem, ValueRange{add(row, c(1)), col});
      state.acc[n] = mma(a, operand(b0), operand(b1), state.acc[n]);
    }
  }
}

SoftmaxState FlashMmaBuilder::visitTile(Value tile, Value stage, ArrayRef<Value> queryFragments,
                                        const SoftmaxState &state) {
  // Mask evaluation where the tile is partial or runs past seq_kv.
  Value k0 = mul(tile, c(shape.blockKv));
  Value full = classifyKvTile(tile).first;
  Value edge = lt(sub(seqKv, k0), c(shape.blockKv));
  Value needed = arith::OrIOp::create(
      b, edge, arith::XOrIOp::create(b, full, arith::ConstantIntOp::create(b, 1, 1)));
  SmallVector<Value> bits = keepBits(k0, needed);
  bool wgmma = shape.kind == MmaKind::wgmma;
  SmallVector<Value> raw = wgmma ? wgmmaScores(stage) : scores(stage, queryFragments);
  SmallVector<Value> s = scaleModsAndMask(raw, k0, bits, needed);
  SoftmaxState next = softmax(s, state);
  if (wgmma)
    wgmmaAccumulateValues(s, stage, next);
  else
    accumulateValues(s, stage, next);
  return next;
}
