//===- FlashMmaDecode.cpp - split-KV decode as two CUDA kernels -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An attn.flash with num_splits, as the two phases of its kernel interface
// (the MLIR CPU backend's DecodeKernel.cpp computes the same):
//
//   @<name>, CTA (split, KV head, batch): the mma.sync CTA of
//     FlashMmaKernel.cpp with its tile rows packed as the CPU kernel packs
//     them, row r = (query head kvHead * G + r / seq_q, position r % seq_q)
//     (G = num_heads / num_kv_heads), so each k and v byte is read once per
//     KV head; its KV tiles are those of split blockIdx.x (the mask's key
//     range for positions [0, seq_q) cut into runs of whole tiles); it writes
//     the rows' normalized partials and log-sum-exp to o_part and lse_part.
//   @<name>_merge, CTA (head, batch): lse = log sum_s exp(lse_s), out = sum_s
//     exp(lse_s - lse) o_s over the splits in order (FlashAttention's combine).
//
// Decode is bound by memory bandwidth, so both run mma.sync on sm_80 and
// sm_90a alike (a 64-row tile at the least: 4 warps issue the copies). The
// per-sequence lengths (kv_lens) and the block table of a paged cache are
// read in the kernel; the runtime checked their entries before the launch.
// o_part and lse_part are device memory the runtime allocates on the stream.
//
//===----------------------------------------------------------------------===//

#include "FlashMmaBuilder.h"

#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::mma;

namespace {

/// Where a decode kernel's arguments are: q, k, v, out, lse, [kv_lens],
/// [block_table], the mods' inputs, o_part, lse_part, [the status word, with
/// inputs], then the params (the views in the kernel interface's order).
struct DecodeArgs {
  unsigned lens = 0, table = 0, firstInput, inputs, oPart, lsePart, status = 0, firstParam;

  explicit DecodeArgs(FlashOp op) {
    unsigned at = 5;
    int64_t page = op.getPageSize() ? int64_t(*op.getPageSize()) : -1;
    if (page >= 0)
      lens = at++;
    if (page > 0)
      table = at++;
    firstInput = at;
    inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
    at += inputs;
    oPart = at++;
    lsePart = at++;
    if (inputs)
      status = at++;
    firstParam = at;
  }
};

} // namespace

void FlashMmaBuilder::bindDecodeArguments(gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  auto args = entry.getArguments();
  DecodeArgs at(op);
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  oPart = args[at.oPart], lsePart = args[at.lsePart];
  auto param = [&](int64_t i) { return args[at.firstParam + i]; };
  auto strides = [&](int64_t first) {
    return Strides{param(first), param(first + 1), param(first + 2)};
  };
  seqQ = param(ATTNC_P_SEQ_Q), seqKv = param(ATTNC_P_SEQ_KV);
  qS = strides(ATTNC_P_Q_STRIDES), kS = strides(ATTNC_P_K_STRIDES);
  vS = strides(ATTNC_P_V_STRIDES);
  lsePartS = strides(ATTNC_P_LSE_PART_STRIDES);
  for (int i = 0; i < 4; ++i)
    oPartS[i] = param(ATTNC_P_O_PART_STRIDES + i);
  if (at.inputs) {
    modInputs = ModInputViews(b, b.getLoc(), op, args.slice(at.firstInput, at.inputs), param,
                              int32_t(at.firstInput));
    status = args[at.status];
  }
  bindLanes();
  split = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  kvHead = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  batch = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  head = mul(kvHead, c(group));
  q0 = c(0);
  if (at.table) {
    blockTable = args[at.table];
    tableStride = param(ATTNC_P_BLOCK_TABLE_STRIDES);
  }
  if (at.lens) { // this sequence's keys (checked against the cache by the runtime)
    kvLens = args[at.lens];
    Value len =
        memref::LoadOp::create(b, kvLens, ValueRange{mul(batch, param(ATTNC_P_KV_LENS_STRIDES))});
    seqKv = arith::IndexCastOp::create(b, b.getIndexType(), len);
  }
}

/// The split's KV tiles [first, end): the mask's key range for positions
/// [0, seq_q) in tiles, cut into runs of ceil(tiles / splits) tiles (at
/// least decodeMinTiles); later splits may be empty. DecodeKernel.cpp's rule.
std::pair<Value, Value> FlashMmaBuilder::splitTiles() {
  uint64_t numSplits = *op.getNumSplits();
  int64_t splits = decodeSplitCount(numSplits);
  int64_t minTiles = decodeMinTiles(numSplits, shape.blockKv);
  auto [keyLo, keyHi] = emitKeyRange(b, b.getLoc(), op.getMask(), c(0), seqQ, seqQ, seqKv);
  auto max = [&](Value x, Value y) { return arith::MaxSIOp::create(b, x, y).getResult(); };
  Value lo = arith::FloorDivSIOp::create(b, max(keyLo, c(0)), c(shape.blockKv));
  Value hi = arith::CeilDivSIOp::create(b, max(min(keyHi, seqKv), c(0)), c(shape.blockKv));
  Value count = max(sub(hi, lo), c(0));
  Value run = max(arith::CeilDivSIOp::create(b, count, c(splits)), c(minTiles));
  Value first = min(add(lo, mul(split, run)), max(hi, lo));
  return {first, max(min(add(first, run), hi), first)};
}

/// o_part = O / l (0 where l = 0) and lse_part = m ln 2 + log l (-inf where
/// l = 0) of this lane's rows that exist, as writeOutputs writes out and lse.
void FlashMmaBuilder::writePartials(const SoftmaxState &state) {
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int half = 0; half < 2; ++half) {
    Value l = quadReduce(state.sum[half], /*isMax=*/false);
    Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32(0));
    Value inv = select(empty, f32(0), arith::DivFOp::create(b, f32(1), l));
    Value row = add(mul(warp, c(16)), add(g, c(8 * half)));
    ifThen(lt(row, mul(c(group), seqQ)), [&] {
      Value headIdx, pos; // not structured bindings: a lambda captures them
      std::tie(headIdx, pos) = rowHeadAndPos(row);
      Value base = add(add(add(mul(batch, oPartS[0]), mul(headIdx, oPartS[1])),
                           add(mul(split, oPartS[2]), mul(pos, oPartS[3]))),
                       mul(t, c(2)));
      for (int64_t n = 0; n < shape.dim / 8; ++n) {
        Value lo = vector::ExtractOp::create(b, state.acc[n], int64_t(2 * half));
        Value hi = vector::ExtractOp::create(b, state.acc[n], int64_t(2 * half + 1));
        Value pair = vector::FromElementsOp::create(
            b, pairType,
            ValueRange{arith::MulFOp::create(b, lo, inv), arith::MulFOp::create(b, hi, inv)});
        vector::StoreOp::create(b, pair, oPart, ValueRange{add(base, c(8 * n))});
      }
      ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, t, c(0)), [&] {
        Value m = arith::MulFOp::create(b, state.max[half], f32(0.693147180559945309));
        Value lse = arith::AddFOp::create(b, m, math::LogOp::create(b, l));
        Value negInf = f32(-std::numeric_limits<double>::infinity());
        Value at = add(offset(lsePartS, batch, headIdx, split), pos);
        memref::StoreOp::create(b, select(empty, negInf, lse), lsePart, ValueRange{at});
      });
    });
  }
}

void FlashMmaBuilder::buildDecode(gpu::GPUFuncOp func) {
  bindDecodeArguments(func);
  writePartials(walkCta());
  gpu::ReturnOp::create(b);
}

namespace {

/// The merge phase: CTA (head, batch), its threads over (position, column)
/// of the head's rows, each adding the splits in order.
class DecodeMergeBuilder {
public:
  DecodeMergeBuilder(FlashOp op, ImplicitLocOpBuilder &b) : op(op), b(b) {}

  void build(gpu::GPUFuncOp func) {
    Block &entry = func.getBody().front();
    b.setInsertionPointToStart(&entry);
    auto args = entry.getArguments();
    DecodeArgs at(op);
    auto param = [&](int64_t i) -> Value { return args[at.firstParam + i]; };
    Value head = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    Value batch = gpu::BlockIdOp::create(b, gpu::Dimension::y);
    Value seqQ = param(ATTNC_P_SEQ_Q);
    int64_t dim = op.getDim();
    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    auto loop = scf::ForOp::create(b, tid, mul(seqQ, c(dim)), c(kMergeThreads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value pos = arith::DivUIOp::create(b, i, c(dim)), d = arith::RemUIOp::create(b, i, c(dim));
    auto strided = [&](int64_t first, std::initializer_list<Value> coords) {
      Value sum = c(0);
      for (auto [k, x] : llvm::enumerate(coords))
        sum = add(sum, mul(x, param(first + int64_t(k))));
      return sum;
    };
    // lse_part [b, h, s, pos] and o_part [b, h, s, pos, d] at split s.
    auto lseAt = [&](Value s) {
      Value i = add(strided(ATTNC_P_LSE_PART_STRIDES, {batch, head, s}), pos);
      return memref::LoadOp::create(b, args[at.lsePart], ValueRange{i}).getResult();
    };
    auto partAt = [&](Value s) {
      Value i = add(strided(ATTNC_P_O_PART_STRIDES, {batch, head, s, pos}), d);
      return memref::LoadOp::create(b, args[at.oPart], ValueRange{i}).getResult();
    };
    Value splits = c(decodeSplitCount(*op.getNumSplits()));
    Value mx = reduceSplits(splits, {negInf()}, [&](Value s, ValueRange acc) {
      return SmallVector<Value>{arith::MaximumFOp::create(b, acc[0], lseAt(s))};
    })[0];
    Value dead = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx, negInf());
    Value shift = arith::SelectOp::create(b, dead, f32(0), mx);
    SmallVector<Value> sums = reduceSplits(splits, {f32(0), f32(0)}, [&](Value s, ValueRange acc) {
      Value w = math::ExpOp::create(b, arith::SubFOp::create(b, lseAt(s), shift));
      return SmallVector<Value>{arith::AddFOp::create(b, acc[0], w),
                                math::FmaOp::create(b, w, partAt(s), acc[1])};
    });
    // A row with nothing kept: out = 0 (every weight is 0), lse = -inf.
    Value inv = arith::SelectOp::create(b, dead, f32(0), arith::DivFOp::create(b, f32(1), sums[0]));
    Value x = arith::MulFOp::create(b, sums[1], inv);
    Type elem = op.getDtype();
    if (!elem.isF32())
      x = arith::TruncFOp::create(b, elem, x);
    memref::StoreOp::create(b, x, args[3],
                            ValueRange{add(strided(ATTNC_P_OUT_STRIDES, {batch, head, pos}), d)});
    if (!op.hasOutput(OutputKind::lse))
      return;
    auto first = scf::IfOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d, c(0)),
                                   /*withElseRegion=*/false);
    b.setInsertionPointToStart(&first.getThenRegion().front());
    Value lse = arith::AddFOp::create(b, shift, math::LogOp::create(b, sums[0]));
    memref::StoreOp::create(b, arith::SelectOp::create(b, dead, negInf(), lse), args[4],
                            ValueRange{strided(ATTNC_P_LSE_STRIDES, {batch, head, pos})});
  }

  static constexpr int64_t kMergeThreads = 128;

private:
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value f32(double v) {
    return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(float(v)));
  }
  Value negInf() { return f32(-std::numeric_limits<double>::infinity()); }

  /// `init` carried through step(s, carried) for s in [0, splits), in order.
  SmallVector<Value> reduceSplits(Value splits, ValueRange init,
                                  llvm::function_ref<SmallVector<Value>(Value, ValueRange)> step) {
    auto loop = scf::ForOp::create(b, c(0), splits, c(1), init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(b, step(loop.getInductionVar(), loop.getRegionIterArgs()));
    return SmallVector<Value>(loop.getResults());
  }

  FlashOp op;
  ImplicitLocOpBuilder &b;
};

/// The argument types of both phases' kernels (DecodeArgs' order), params
/// as many as the kernel interface has.
SmallVector<Type> decodeArgumentTypes(FlashOp op, StringRef name) {
  MLIRContext *ctx = op.getContext();
  Builder b(ctx);
  auto global = IntegerAttr::get(IntegerType::get(ctx, 64), 1);
  auto buf = [&](Type elem) -> Type {
    return MemRefType::get({ShapedType::kDynamic}, elem, nullptr, global);
  };
  Type elem = buf(op.getDtype()), f32 = buf(b.getF32Type()), i32 = buf(b.getI32Type());
  SmallVector<Type> args{elem, elem, elem, elem, f32};
  DecodeArgs at(op);
  if (at.lens)
    args.push_back(i32);
  if (at.table)
    args.push_back(i32);
  if (ArrayAttr decls = op.getInputsAttr())
    for (auto decl : decls.getAsRange<ModInputAttr>())
      args.push_back(decl.getElementType().isInteger() ? i32 : f32);
  args.append({f32, f32});
  if (at.inputs)
    args.push_back(i32);
  DictionaryAttr entry = op.describeEntry(name, kDLCUDA);
  args.append(FlashOp::interfaceFromEntry(op.getLoc(), entry)->numParams, b.getIndexType());
  return args;
}

gpu::GPUFuncOp decodeFunction(FlashOp op, gpu::GPUModuleOp module, StringRef kernel, StringRef name,
                              int64_t threads) {
  MLIRContext *ctx = op.getContext();
  ImplicitLocOpBuilder b(op.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto func =
      gpu::GPUFuncOp::create(b, name, FunctionType::get(ctx, decodeArgumentTypes(op, kernel), {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
  return func;
}

} // namespace

int64_t mlir::attn::decodeMergeThreads() { return DecodeMergeBuilder::kMergeThreads; }

int64_t mlir::attn::decodeFirstInput(FlashOp op) { return DecodeArgs(op).firstInput; }

std::pair<gpu::GPUFuncOp, gpu::GPUFuncOp>
mlir::attn::buildMmaDecodeKernels(FlashOp op, const CudaTarget &target, gpu::GPUModuleOp module,
                                  StringRef name) {
  MmaKernelShape shape = MmaKernelShape::of(op, target);
  gpu::GPUFuncOp attention = decodeFunction(op, module, name, name, shape.threads);
  ImplicitLocOpBuilder body(op.getLoc(), op.getContext());
  FlashMmaBuilder(op, target, module, body).buildDecode(attention);
  gpu::GPUFuncOp merge =
      decodeFunction(op, module, name, (name + "_merge").str(), DecodeMergeBuilder::kMergeThreads);
  ImplicitLocOpBuilder mergeBody(op.getLoc(), op.getContext());
  DecodeMergeBuilder(op, mergeBody).build(merge);
  mergeBody.setInsertionPointToEnd(&merge.getBody().front());
  gpu::ReturnOp::create(mergeBody);
  return {attention, merge};
}
