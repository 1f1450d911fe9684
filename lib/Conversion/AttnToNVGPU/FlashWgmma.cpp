//===- FlashWgmma.cpp - attn.flash as a wgmma + TMA kernel for sm_90a -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Hopper kernel: one CTA per (query tile, head, batch) as on sm_80, with
// block_q / 64 warpgroups. Not warp-specialised: thread 0 issues the loads,
// every warpgroup computes.
//
//   thread 0: init the mbarriers (Q, KV stage 0, KV stage 1)
//   thread 0: TMA the query tile and the first visited KV tile (stage 0)
//   wait for Q
//   for each visited KV tile:
//     wait for its stage's mbarrier (one phase bit per stage); barrier:
//       every warpgroup is done with the other stage
//     thread 0: TMA the next visited tile into the other stage
//     S = Q K^T   wgmma m64n{block_kv}k16, A and B from shared memory
//     mods, mask, online softmax: FlashMmaTile.cpp, on the same fragments
//     O += P V    wgmma m64n{head_dim}k16, A = P from registers, B = V
//                 from shared memory (transposed: head_dim is contiguous)
//   out, lse: FlashMmaKernel.cpp's epilogue
//
// Shared tiles are 64-column blocks of 128-byte rows in the 128-byte
// swizzle (16-byte chunk c of row r stored at chunk c ^ (r % 8), 1024-byte
// atoms of 8 rows): TMA writes it from a SWIZZLE_128B tensor map, the wgmma
// descriptors name it. TMA zero-fills rows past the sequence and columns past
// head_dim, so no tile needs padding code.
//
//===----------------------------------------------------------------------===//

#include "FlashMmaBuilder.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma;

/// The kernel's dynamic shared memory, declared with the swizzle's alignment.
static constexpr StringLiteral kShared = "attnc_shared";
/// Bytes of one row of a 64-column block, and of one 8-row swizzle atom.
static constexpr int64_t kRowBytes = 128, kAtomBytes = 1024;

/// The shared address `offset` (+ `extra` bytes, an index) as !llvm.ptr<3>.
Value FlashMmaBuilder::sharedAt(int64_t offset, Value extra) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value base = LLVM::AddressOfOp::create(b, ptr, kShared);
  Value bytes = extra ? add(c(offset), extra) : c(offset);
  Value index = arith::IndexCastOp::create(b, b.getI64Type(), bytes);
  return LLVM::GEPOp::create(b, ptr, b.getI8Type(), base, ArrayRef<LLVM::GEPArg>{index});
}

static Value i32Of(ImplicitLocOpBuilder &b, Value index) {
  return arith::IndexCastOp::create(b, b.getI32Type(), index);
}

/// TMA of `rows` rows from `row` of head `headIdx` (this batch), each
/// 64-column block j of head_dim into `dst` + j rows x 128 bytes, completing
/// on `barrier`. The tensor map is (head_dim, seq, heads, batch).
void FlashMmaBuilder::loadTma(Value map, Value dst, Value barrier, Value row, Value headIdx,
                              int64_t rows) {
  for (int64_t block = 0; block < shape.dimPadded / 64; ++block) {
    Value at = LLVM::GEPOp::create(b, dst.getType(), b.getI8Type(), dst,
                                   ArrayRef<LLVM::GEPArg>{int32_t(block * rows * kRowBytes)});
    SmallVector<Value> coords{i32Of(b, c(64 * block)), i32Of(b, row), i32Of(b, headIdx),
                              i32Of(b, batch)};
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, at, map, coords, barrier, ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/true, NVVM::CTAGroupKindAttr(), Value());
  }
}

/// Thread 0's loads of KV tile `tile` into `stage`, both under the stage's
/// mbarrier, which expects their bytes.
void FlashMmaBuilder::loadKvTileTma(Value tile, Value stage) {
  Value k0 = mul(tile, c(shape.blockKv));
  Value stageBytes = mul(stage, c(shape.kvTileBytes()));
  Value barrier = sharedAt(shape.barrierOffset(1), mul(stage, c(8)));
  NVVM::MBarrierArriveExpectTxOp::create(
      b, Type(), barrier, arith::ConstantIntOp::create(b, 2 * shape.kvTileBytes(), 32),
      NVVM::MemScopeKind::CTA, false, Value());
  loadTma(kMap, sharedAt(shape.keyOffset(0), stageBytes), barrier, k0, kvHead, shape.blockKv);
  loadTma(vMap, sharedAt(shape.valueOffset(0), stageBytes), barrier, k0, kvHead, shape.blockKv);
}

void FlashMmaBuilder::waitBarrier(Value barrier, Value parity) {
  // The suspend-time hint of CUTLASS's waits (ns); the op loops until done.
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, parity,
                                        arith::ConstantIntOp::create(b, 10000000, 32));
}

/// A wgmma shared-memory matrix descriptor with the 128-byte swizzle: the
/// start address, the leading and stride byte offsets (each in 16-byte
/// units, 14 bits) and the layout type 1 in bits 62-63.
Value FlashMmaBuilder::descriptor(Value address, int64_t leadingBytes, int64_t strideBytes) {
  Type i64 = b.getI64Type();
  auto k = [&](uint64_t v) { return arith::ConstantIntOp::create(b, i64, int64_t(v)); };
  Value start = LLVM::PtrToIntOp::create(b, i64, address);
  start = arith::ShRUIOp::create(b, arith::AndIOp::create(b, start, k(0x3ffff)), k(4));
  uint64_t fixed = (uint64_t(leadingBytes >> 4) & 0x3fff) << 16 |
                   (uint64_t(strideBytes >> 4) & 0x3fff) << 32 | uint64_t(1) << 62;
  return arith::OrIOp::create(b, start, k(fixed));
}

/// `values` (f32) through an empty asm that claims to change them: the
/// compiler may not move their reads or writes across it, so accumulators
/// are not touched while a wgmma still owns their registers.
SmallVector<Value> FlashMmaBuilder::fenceOperands(ArrayRef<Value> values) {
  int64_t n = int64_t(values.size());
  std::string constraints;
  for (int64_t i = 0; i < n; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < n; ++i)
    constraints += std::to_string(i) + (i + 1 < n ? "," : "");
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(n, b.getF32Type()));
  auto fence = LLVM::InlineAsmOp::create(b, type, values, "", constraints,
                                         /*has_side_effects=*/true, false,
                                         LLVM::tailcallkind::TailCallKind::None,
                                         LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, fence.getResult(0), i));
  return out;
}

/// Scalars of an f32 struct regrouped as the vector<4xf32> fragments (n-tile j
/// = elements 4j .. 4j + 3) the softmax works on, after the fence.
static SmallVector<Value> asFragments(ImplicitLocOpBuilder &b, ArrayRef<Value> scalars) {
  auto type = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> fragments;
  for (size_t i = 0; i < scalars.size(); i += 4)
    fragments.push_back(vector::FromElementsOp::create(b, type, scalars.slice(i, 4)));
  return fragments;
}

/// S = Q K^T for this warpgroup's 64 rows and the tile's block_kv keys: both
/// operands K-major in shared memory; a k16 step advances 32 bytes within
/// the swizzled 128-byte rows, a 64-column block at a time.
SmallVector<Value> FlashMmaBuilder::wgmmaScores(Value stage) {
  MLIRContext *ctx = b.getContext();
  int64_t n = shape.blockKv;
  auto type = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, b.getF32Type()));
  Value acc = LLVM::ZeroOp::create(b, type);
  Value rows = mul(div(warp, 4), c(64 * kRowBytes));
  Value keys = mul(stage, c(shape.kvTileBytes()));
  auto in = elemType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t chunk = 0; chunk < int64_t(llvm::alignTo(shape.dim, 16)) / 16; ++chunk) {
    int64_t block = chunk / 4, within = (chunk % 4) * 32;
    Value a = descriptor(sharedAt(block * shape.blockQ * kRowBytes + within, rows), 16,
                         kAtomBytes);
    Value bDesc = descriptor(sharedAt(shape.keyOffset(0) + block * n * kRowBytes + within, keys),
                             16, kAtomBytes);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, type, acc, a, bDesc, NVVM::MMAShapeAttr::get(ctx, 64, int(n), 16), in, in,
        NVVM::WGMMATypes::f32,
        chunk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  SmallVector<Value> scalars;
  for (int64_t i = 0; i < n / 2; ++i)
    scalars.push_back(LLVM::ExtractValueOp::create(b, acc, i));
  return asFragments(b, fenceOperands(scalars));
}

/// O += P V: per k16 step of keys, P's accumulators rounded to the element
/// type are the A fragment (registers; the NVVM dialect's wgmma takes A only
/// from shared memory, so this one instruction is inline PTX), and V's 16
/// rows are an MN-major B operand: 64-column blocks `leading` bytes apart,
/// 8-row atoms 1024 bytes apart.
void FlashMmaBuilder::wgmmaAccumulateValues(ArrayRef<Value> p, Value stage,
                                            SoftmaxState &state) {
  int64_t n = shape.dimPadded, regs = n / 2;
  SmallVector<Value> acc;
  for (Value fragment : state.acc)
    for (int64_t e = 0; e < 4; ++e)
      acc.push_back(vector::ExtractOp::create(b, fragment, e));
  acc = fenceOperands(acc);

  const char *type = elemType.isBF16() ? "bf16" : "f16";
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" +
                    std::to_string(n) + "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    ptx += "$" + std::to_string(i) + (i + 1 < regs ? ", " : "}, {");
    constraints += "=f,";
  }
  ptx += "$" + std::to_string(regs) + ", $" + std::to_string(regs + 1) + ", $" +
         std::to_string(regs + 2) + ", $" + std::to_string(regs + 3) + "}, $" +
         std::to_string(regs + 4) + ", p, 1, 1, 1;\n}";
  constraints += "r,r,r,r,l";
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);

  auto pack = [&](Value fragment, int64_t e) -> Value {
    // The inline PTX takes every A register as a b32, f16 pairs too.
    Value bits = vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()),
                                           elementPair(fragment, e));
    return vector::ExtractOp::create(b, bits, int64_t(0));
  };
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(regs, b.getF32Type()));
  Value values = mul(stage, c(shape.kvTileBytes()));
  int64_t leading = shape.blockKv * kRowBytes;
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t chunk = 0; chunk < shape.blockKv / 16; ++chunk) {
    Value lo = p[2 * chunk], hi = p[2 * chunk + 1];
    SmallVector<Value> operands{pack(lo, 0), pack(lo, 2), pack(hi, 0), pack(hi, 2)};
    operands.push_back(descriptor(
        sharedAt(shape.valueOffset(0) + chunk * 16 * kRowBytes, values), leading, kAtomBytes));
    llvm::append_range(operands, acc);
    auto mma = LLVM::InlineAsmOp::create(b, resultType, operands, ptx, constraints,
                                         /*has_side_effects=*/true, false,
                                         LLVM::tailcallkind::TailCallKind::None,
                                         LLVM::AsmDialectAttr(), ArrayAttr());
    for (int64_t i = 0; i < regs; ++i)
      acc[i] = LLVM::ExtractValueOp::create(b, mma.getResult(0), i);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
  state.acc = asFragments(b, fenceOperands(acc));
}

void FlashMmaBuilder::buildWgmma() {
  MLIRContext *ctx = b.getContext();
  if (!SymbolTable::lookupSymbolIn(module, kShared)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External, kShared, Attribute(),
                           kAtomBytes, /*addrSpace=*/3);
  }
  auto i32c = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 32); };
  Value elected = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c(0));
  Value queryBarrier = sharedAt(shape.barrierOffset(0));
  ifThen(elected, [&] {
    for (int64_t i = 0; i < 3; ++i)
      NVVM::MBarrierInitOp::create(b, sharedAt(shape.barrierOffset(i)), i32c(1), Value());
    // The initialised barriers, visible to the TMA unit (the async proxy).
    NVVM::FenceProxyOp::create(b, NVVM::ProxyKind::async_shared,
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  });
  gpu::BarrierOp::create(b);
  Value firstTile, endTile; // not structured bindings: lambdas capture them
  std::tie(firstTile, endTile) = kvTileRange();
  Value first = nextVisitedTile(firstTile, endTile);
  ifThen(elected, [&] {
    NVVM::MBarrierArriveExpectTxOp::create(b, Type(), queryBarrier,
                                           i32c(shape.queryBytes()), NVVM::MemScopeKind::CTA,
                                           false, Value());
    loadTma(qMap, sharedAt(0), queryBarrier, q0, head, shape.blockQ);
    ifThen(lt(first, endTile), [&] { loadKvTileTma(first, c(0)); });
  });
  waitBarrier(queryBarrier, i32c(0));

  // Bit s of the extra value carried by the walk is the parity of stage s's
  // next completion.
  SoftmaxState last = walkKvTiles(
      first, endTile, {i32c(0)},
      [&](Value tile, Value stage, Value otherStage, ValueRange extra,
          const SoftmaxState &state) {
        Value phases = extra[0];
        Value stageBit = arith::ShLIOp::create(b, i32c(1), i32Of(b, stage));
        Value parity = arith::ShRUIOp::create(b, arith::AndIOp::create(b, phases, stageBit),
                                              i32Of(b, stage));
        waitBarrier(sharedAt(shape.barrierOffset(1), mul(stage, c(8))), parity);
        // Every warpgroup's wgmmas on the other stage (the previous tile) are
        // done: it may be refilled.
        gpu::BarrierOp::create(b);
        Value next = nextVisitedTile(add(tile, c(1)), endTile);
        ifThen(arith::AndIOp::create(b, elected, lt(next, endTile)),
               [&] { loadKvTileTma(next, otherStage); });
        Value flipped = arith::XOrIOp::create(b, phases, stageBit);
        return KvStepResult{next, {flipped}, visitTile(tile, stage, {}, state)};
      });
  writeOutputs(last);
  gpu::ReturnOp::create(b);
}
