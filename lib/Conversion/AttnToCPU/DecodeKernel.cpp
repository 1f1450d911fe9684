//===- DecodeKernel.cpp - attn.flash with num_splits to split-KV decode ---===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A decode step reads a long KV cache for a few query rows, so it is bound by
// memory bandwidth: the kernel must read each k and v byte once and keep the
// cores busy while it streams. Two phases (kernel interface v2):
//
//   attention, item (b, g, split): the rows of every query head of KV head g
//     (heads g * G .. g * G + G - 1, G = num_heads / num_kv_heads) at every
//     query position, R = G x seq_q rows packed together, against KV tiles
//     [t0, t1) of the split (the mask's key range cut into num_splits runs of
//     whole tiles); the online softmax of attn.flash per row; the normalized
//     partial rows and their log-sum-exp go to the scratch tensors o_part and
//     lse_part (an empty range writes lse -inf).
//   merge, item (b, h): lse = log sum_s exp(lse_s), out = sum_s exp(lse_s -
//     lse) o_s over the splits (FlashAttention's combine), in split order.
//
// Unlike the prefill tile function (FlashKernel.cpp), whose query rows run
// along the vector lanes (a tile of at least a vector of rows), the rows here
// are few, so vectors run along head_dim: a score is a dot product of two
// rows reduced across lanes, and P V adds p * v rows into a row's
// accumulators. Both run in register blocks of up to 4 rows, so that each k
// or v vector loaded serves every row of the block: the tile's k and v lines
// (prefetched into L2 during the previous tile) are read once per block, not
// once per row. bf16 k and v are read in place, converted as loaded (on
// AVX512-BF16, vdpbf16ps scores on k as stored); f16 tiles are widened to f32
// once per tile. The work per
// split does not depend on the thread count, and the merge adds in split
// order: results are bit-identical for any number of threads.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"

#include "FlashKernelBuilder.h"
#include "LoopBuilder.h"
#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Conversion/Common/InlineMod.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr double kLog2e = 1.44269504088896341;
constexpr double kLn2 = 0.693147180559945309;
/// The most rows a register block of the scores or P V has.
constexpr int64_t kRowBlock = 4;

class DecodeKernelBuilder : VectorLoopBuilder {
public:
  DecodeKernelBuilder(FlashOp op, const CpuKernelConfig &config, ImplicitLocOpBuilder &b,
                      int64_t splits, int64_t minTiles)
      : VectorLoopBuilder(b, config.vectorWidth), op(op), cfg(config), dim(op.getDim()),
        dimPadded((dim + w - 1) / w * w), blockKv(op.getTileKv()),
        group(op.getHeads() / op.getKvHeads()),
        perItem(op.decodeKvHeadsPerItem()),
        maxRows(perItem * group * decodeMaxSeqQ(op.getMaxSeq())), splits(splits),
        minTiles(minTiles),
        pageSize(op.getPageSize() ? int64_t(*op.getPageSize()) : -1),
        elemType(op.getDtype()), base2(op.getScoreMod().empty()),
        dot(elemType.isBF16() && config.bf16Dot && w == 16 && dim % (2 * w) == 0),
        wide(elemType.isF16()) {}

  void buildPartial(func::FuncOp func);
  void buildMerge(func::FuncOp func);

private:
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value maxIdx(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  /// Key u of step t of a score block that takes `keys` keys a step: the
  /// steps' keys interleaved, t + u x (blockKv / keys).
  Value keyOf(Value t, int64_t u, int64_t keys) { return add(t, idx(u * (blockKv / keys))); }
  Value eqIdx(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  /// Cache-line aligned: vector stores that straddle two lines (the default
  /// alignment put KF at 8 bytes past one) cost bf16 decode a third of its time.
  Value stackBuffer(ArrayRef<int64_t> shape, Type elem) {
    return memref::AllocaOp::create(b, MemRefType::get(shape, elem),
                                    b.getI64IntegerAttr(kLineBytes));
  }
  /// A plain max (one vmaxps); NaN scores still make their row NaN through P.
  Value plainMax(Value x, Value y) {
    return arith::SelectOp::create(
        b, arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, y), x, y);
  }
  Value reduce(vector::CombiningKind kind, Value v) {
    return vector::ReductionOp::create(b, kind, v, arith::FastMathFlags::reassoc);
  }
  /// e^x (or 2^x for base-2 scores) of a vector x <= 0.
  Value expOf(Value x) {
    if (!base2)
      x = arith::MulFOp::create(b, x, splat(f32(kLog2e)));
    return emitExp2NonPositive(b, b.getLoc(), x, ExpAccuracy::f32, cfg.avx512Scalef);
  }

  /// The factor on q . k: the spec's scale, times log2(e) for base-2 scores.
  double queryScale() {
    return op.getScaleAttr().getValueAsDouble() * (base2 ? kLog2e : 1.0);
  }
  /// The query head and position of packed row r: the item's KV heads' query
  /// heads are consecutive, each at every position.
  std::pair<Value, Value> rowOf(Value r) {
    return {add(mul(kvBase, idx(group)), div(r, seqQ)), rem(r, seqQ)};
  }
  /// Where [batch, head, split, pos] is in lse_part, and its row in o_part.
  std::pair<Value, Value> partAt(Value head, Value split, Value pos) {
    Value lse = add(offset(lsePartS, batch, head, split), pos);
    Value row = add(offset({oPartS[0], oPartS[1], oPartS[2]}, batch, head, split),
                    mul(pos, oPartS[3]));
    return {lse, row};
  }

  void readCommon(ArrayRef<BlockArgument> args);
  Value keyAt(const Strides &s, Value key, Value head);
  void loadQueries();
  std::pair<Value, Value> splitTiles(Value split);
  std::pair<Value, Value> classify(Value k0, Value cols);
  void widenTile(Value k0, Value cols);
  Value keyRow(const Strides &s, Value k0, Value j);
  Value rowVector(Value src, Value row, int64_t d);
  Value sumLanes(SmallVector<Value> vecs);
  void forRowBlocks(int64_t most, llvm::function_ref<void(Value, int64_t)> body);
  void computeScores(Value k0, Value cols);
  void scoreBlock(Value r0, int64_t rowCount, Value k0, Value t, Value lastKey);
  void maskScores(Value k0, Value cols, Value full);
  void softmax();
  void accumulate(Value k0, Value cols);
  void valueBlock(Value r0, int64_t rowCount, int64_t c0, int64_t count, Value k0, Value cols,
                  Value prefetch);
  void prefetchNext(Value buf, const Strides &s, Value step, int64_t steps);
  void visitTile(Value tile, Value end);
  void writePartials(Value split);
  void mergeRow(Value head, Value pos);

  FlashOp op;
  CpuKernelConfig cfg;
  int64_t dim, dimPadded, blockKv, group;
  /// KV heads per item (decodeKvHeadsPerItem), their rows packed in order.
  int64_t perItem;
  int64_t maxRows, splits, minTiles;
  /// kv_cache: -1 none, 0 per-sequence lengths, > 0 pages of this many keys.
  int64_t pageSize;
  /// The first of the item's coordinates among the function's arguments.
  unsigned coords = 0;
  Type elemType;
  /// Scores in units of log2(e), as in the prefill kernel; not with a
  /// score_mod, which sees natural-unit scores.
  bool base2;
  /// bf16 on AVX512-BF16: scores by vdpbf16ps on q and k as stored (QP, k in
  /// place: half the instructions), scaled as they are stored; P V converts
  /// v to f32 as it loads it (5% faster than widening the tile first).
  bool dot;
  /// f16 tiles are widened to f32 once per tile (KF, VF): without F16C each
  /// conversion is a call. bf16 converts as it loads (a shift), each k or v
  /// vector once per row block: 1.3x faster on AVX2 than widening the tile.
  bool wide;
  ModuleOp module;
  Value qBuf, kBuf, vBuf, outBuf, lseBuf, oPart, lsePart, batch;
  /// The item's first KV head; the one a tile's pass is on, and its rows
  /// [rowLo, rowHi) of the `rows` packed ones.
  Value kvBase, kvHead, rowLo, rowHi;
  Value rows, status;
  /// kv_cache: kv_lens, and with pages block_table and its batch stride.
  Value lensBuf, tableBuf, tableStride;
  ModInputViews modInputs; // the tensors the mods read
  Strides lsePartS; // lse_part: (batch, head, split)
  Value oPartS[4];  // o_part: (batch, head, split, seq_q)
  /// QS: the packed rows' scaled queries, maxRows x dimPadded (zero padded;
  /// QP instead with `dot`: the rows as stored, maxRows x dim bf16);
  /// S: a tile's scores, then P, maxRows x blockKv; Acc, M, L, ALPHA per row;
  /// KF / VF: a widened f16 tile, blockKv x dimPadded.
  Value QS, QP, S, Acc, M, L, ALPHA, KF, VF;
  /// Whether the split has a tile after this one, and its first key.
  Value hasNext, nextK0;
};

} // namespace

void DecodeKernelBuilder::readCommon(ArrayRef<BlockArgument> args) {
  module = b.getBlock()->getParentOp()->getParentOfType<ModuleOp>();
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3], lseBuf = args[4];
  unsigned at = 5;
  if (pageSize >= 0)
    lensBuf = args[at++];
  if (pageSize > 0)
    tableBuf = args[at++];
  // The mods' inputs, then the scratch tensors (KernelInterface.h).
  unsigned firstInput = at;
  at += op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  oPart = args[at], lsePart = args[at + 1], params = args[at + 2];
  coords = at + 3;
  readAttentionParams();
  modInputs = ModInputViews(b, b.getLoc(), op, ValueRange(args.slice(firstInput, at - firstInput)),
                            params, int32_t(firstInput));
  lsePartS = readStrides(ATTNC_P_LSE_PART_STRIDES);
  for (int i = 0; i < 4; ++i)
    oPartS[i] = readParam(ATTNC_P_O_PART_STRIDES + i);
  status = stackBuffer({1}, b.getI32Type());
  store(arith::ConstantIntOp::create(b, 0, 32), status, {idx(0)});
}

/// QS[r] = scale * q[b, head(r), pos(r)] (times log2(e) for base-2 scores),
/// or QP[r] = q[b, head(r), pos(r)] with `dot`; M = -inf, L = 0, Acc = 0.
void DecodeKernelBuilder::loadQueries() {
  double scale = queryScale();
  Value zero = f32(0);
  loop(0, rows, 1, [&](Value r) {
    auto [head, pos] = rowOf(r);
    Value base = offset(qS, batch, head, pos);
    if (dot)
      loop(0, idx(dim), 1, [&](Value d) { store(load(qBuf, {add(base, d)}), QP, {r, d}); });
    loop(0, idx(dimPadded), 1, [&](Value d) {
      store(zero, Acc, {r, d});
    });
    store(negInf(), M, {r});
    store(zero, L, {r});
    if (dot)
      return;
    loop(0, idx(dimPadded), 1, [&](Value d) {
      Value x = select(
          lt(d, idx(dim)), b.getF32Type(),
          [&] {
            Value e = load(qBuf, {add(base, d)});
            if (!elemType.isF32())
              e = arith::ExtFOp::create(b, b.getF32Type(), e);
            return arith::MulFOp::create(b, e, f32(scale)).getResult();
          },
          [&] { return zero; });
      store(x, QS, {r, d});
    });
  });
}

/// The split's KV tiles [first, end): the mask's key range for query
/// positions [0, seq_q) in tiles, cut into runs of ceil(tiles / splits) (at
/// least minTiles) whole tiles; later splits may be empty.
std::pair<Value, Value> DecodeKernelBuilder::splitTiles(Value split) {
  auto [keyLo, keyHi] = emitKeyRange(b, b.getLoc(), op.getMask(), idx(0), seqQ, seqQ, seqKv);
  Value lo = arith::FloorDivSIOp::create(b, maxIdx(keyLo, idx(0)), idx(blockKv));
  Value hi = arith::CeilDivSIOp::create(b, maxIdx(minIdx(keyHi, seqKv), idx(0)), idx(blockKv));
  Value count = maxIdx(sub(hi, lo), idx(0));
  Value run = maxIdx(arith::CeilDivSIOp::create(b, count, idx(splits)), idx(minTiles));
  Value first = minIdx(add(lo, mul(split, run)), maxIdx(hi, lo));
  return {first, maxIdx(minIdx(add(first, run), hi), first)};
}

/// (full, empty) of keys [k0, k0 + cols) for every query position: the mask
/// attribute's class, and with a mask_mod the tiles its interval analysis
/// decides over every query position and head (as FlashKernel.cpp does per
/// query tile and head).
std::pair<Value, Value> DecodeKernelBuilder::classify(Value k0, Value cols) {
  TileBounds<Value> bounds{idx(0), seqQ, k0, add(k0, cols), seqQ, seqKv};
  auto loadRange = [&](Operation *load, ArrayRef<std::pair<Value, Value>> box) {
    return modInputs.range(b, b.getLoc(), cast<LoadOp>(load), box);
  };
  return attnc::emitTileClassWithMaskMod(b, b.getLoc(), module, op.getMask(), op.getMaskMod(),
                                         bounds, batch, idx(0), idx(op.getHeads() - 1),
                                         loadRange);
}

/// KF / VF rows j < cols = k / v rows k0 + j in f32 (f16 kernels).
/// Prefetching the next tile here, in bursts, measured no better than in the
/// score and P V loops, where the other kernels do it.
void DecodeKernelBuilder::widenTile(Value k0, Value cols) {
  auto elemVec = VectorType::get({w}, elemType);
  int64_t dimFull = dim / w * w;
  loop(0, cols, 1, [&](Value j) {
    Value to = mul(j, idx(dimPadded));
    for (auto [src, strides, dst] : {std::tuple{kBuf, kS, KF}, std::tuple{vBuf, vS, VF}}) {
      Value from = keyAt(strides, add(k0, j), kvHead);
      for (int64_t d = 0; d < dimFull; d += w) {
        Value x = vector::LoadOp::create(b, elemVec, src, ValueRange{add(from, idx(d))});
        storeVec(arith::ExtFOp::create(b, vecType(), x), dst, {add(to, idx(d))});
      }
      for (int64_t d = dimFull; d < dim; ++d) {
        Value x = load(src, {add(from, idx(d))});
        store(arith::ExtFOp::create(b, b.getF32Type(), x), dst, {add(to, idx(d))});
      }
    }
  });
}

/// Where key (or value) row k0 + j starts: in k (v) itself, or in the
/// widened tile KF (VF).
Value DecodeKernelBuilder::keyRow(const Strides &s, Value k0, Value j) {
  if (wide)
    return mul(j, idx(dimPadded));
  return keyAt(s, add(k0, j), kvHead);
}

/// Where key `key` of the item's sequence and KV head `head` starts in k (v): with
/// pages, at row key % page_size of page block_table[b, key / page_size] (the
/// runtime checked every entry; a power-of-two page size costs a shift and a
/// mask).
Value DecodeKernelBuilder::keyAt(const Strides &s, Value key, Value head) {
  if (pageSize <= 0)
    return offset(s, batch, head, key);
  Value slot = add(mul(batch, tableStride), div(key, idx(pageSize)));
  Value page = arith::IndexCastOp::create(b, b.getIndexType(), load(tableBuf, {slot}));
  return offset(s, page, head, rem(key, idx(pageSize)));
}

/// w vectors (key i's products in vector i) -> one vector whose lane i is
/// the sum of vector i: log2(w) levels, each adding the two halves of every
/// block of the vectors it pairs up (two shuffles and an add per pair), then
/// one shuffle into key order. 45 instructions for 16 scores on AVX-512,
/// where a reduction per score takes 8 with a chain of 7.
Value DecodeKernelBuilder::sumLanes(SmallVector<Value> vecs) {
  // keys[v][lane]: whose partial sum each lane holds.
  SmallVector<SmallVector<int64_t>> keys;
  for (int64_t v = 0; v < w; ++v)
    keys.push_back(SmallVector<int64_t>(w, v));
  for (int64_t half = w / 2; half >= 1; half /= 2) {
    SmallVector<Value> next;
    SmallVector<SmallVector<int64_t>> nextKeys;
    for (size_t v = 0; v < vecs.size(); v += 2) {
      SmallVector<int64_t> lo, hi, owner;
      for (int64_t block = 0; block < w; block += 2 * half)
        for (int64_t from : {int64_t(0), w}) // x's block, then y's
          for (int64_t i = 0; i < half; ++i) {
            lo.push_back(from + block + i);
            hi.push_back(from + block + half + i);
            owner.push_back(keys[v + (from ? 1 : 0)][block + i]);
          }
      Value x = vector::ShuffleOp::create(b, vecs[v], vecs[v + 1], lo);
      Value y = vector::ShuffleOp::create(b, vecs[v], vecs[v + 1], hi);
      next.push_back(arith::AddFOp::create(b, x, y));
      nextKeys.push_back(owner);
    }
    vecs = std::move(next);
    keys = std::move(nextKeys);
  }
  SmallVector<int64_t> order(w);
  for (int64_t lane = 0; lane < w; ++lane)
    order[keys[0][lane]] = lane;
  return vector::ShuffleOp::create(b, vecs[0], vecs[0], order);
}

/// Lanes [d, d + w) of a k or v row at `row` of `src`, in f32: a widened row
/// is zero padded to dimPadded; one in place has a masked load for a head_dim
/// tail, and bf16 converted as it is loaded.
Value DecodeKernelBuilder::rowVector(Value src, Value row, int64_t d) {
  Value at = add(row, idx(d));
  if (wide)
    return loadVec(src, {at});
  return loadLanes(src, at, std::min(w, dim - d));
}

/// Rows [rowLo, rowHi) in register blocks: of `most` rows (a power of two)
/// while that many are left, then one of each smaller power of two the rest
/// needs; body(first row, rows).
void DecodeKernelBuilder::forRowBlocks(int64_t most,
                                       llvm::function_ref<void(Value, int64_t)> body) {
  Value count = sub(rowHi, rowLo);
  Value whole = add(rowLo, mul(div(count, idx(most)), idx(most)));
  loop(rowLo, whole, most, [&](Value r0) { body(r0, most); });
  Value at = whole;
  for (int64_t rows = most / 2; rows >= 1; rows /= 2) {
    Value fits = arith::CmpIOp::create(b, arith::CmpIPredicate::sle, add(at, idx(rows)), rowHi);
    ifThen(fits, [&] { body(at, rows); });
    at = arith::SelectOp::create(b, fits, add(at, idx(rows)), at);
  }
}

/// S[r, j] = QS[r] . k[k0 + j] for j < cols, -inf past them, a row block
/// against w / rows keys a step. The first block of the pass prefetches the
/// split's next tile over its steps.
void DecodeKernelBuilder::computeScores(Value k0, Value cols) {
  Value lastKey = sub(cols, idx(1));
  forRowBlocks(std::min(kRowBlock, w), [&](Value r0, int64_t rowCount) {
    int64_t keys = w / rowCount;
    Value first = eqIdx(r0, rowLo);
    loop(0, idx(blockKv / keys), 1, [&](Value t) {
      ifThen(first, [&] { prefetchNext(kBuf, kS, t, blockKv / keys); });
      scoreBlock(r0, rowCount, k0, t, lastKey);
    });
  });
  loop(rowLo, rowHi, 1, [&](Value r) {
    loop(cols, idx(blockKv), 1, [&](Value j) { store(negInf(), S, {r, j}); });
  });
}

/// Scores of rows [r0, r0 + rowCount) against keys k0 + keyOf(t, u), u <
/// keys = w / rowCount: per head_dim vector, rowCount query vectors (from
/// QS, in L1) and `keys` key vectors, each product in its own accumulator,
/// which sumLanes turns into one vector of the block's scores (row-major).
/// A key vector serves every row of the block from its register: a
/// token-major or paged cache's rows of one KV head, a head stride (4 KiB)
/// apart, share a few L1 sets, and read again per row they came from L2
/// (2.3x slower warm). The step's keys are blockKv / keys apart, so each
/// stretch of the tile is read by one ascending stream, which the hardware
/// prefetchers follow (consecutive keys interleaved four streams in a page:
/// f32 from memory 5-10% slower). Keys past the tile's last read the last
/// key's row (in bounds).
void DecodeKernelBuilder::scoreBlock(Value r0, int64_t rowCount, Value k0, Value t,
                                     Value lastKey) {
  Value src = wide ? KF : kBuf;
  int64_t keys = w / rowCount, step = dot ? 2 * w : w;
  auto pairs = VectorType::get({2 * w}, elemType);
  SmallVector<Value> rows;
  for (int64_t u = 0; u < keys; ++u)
    rows.push_back(keyRow(kS, k0, minIdx(keyOf(t, u, keys), lastKey)));
  SmallVector<Value> acc(w);
  for (int64_t d = 0; d < (dot ? dim : dimPadded); d += step) {
    SmallVector<Value> qv, kv;
    for (int64_t r = 0; r < rowCount; ++r) {
      SmallVector<Value, 2> at = {add(r0, idx(r)), idx(d)};
      qv.push_back(dot ? vector::LoadOp::create(b, pairs, QP, at).getResult() : loadVec(QS, at));
    }
    for (Value row : rows)
      kv.push_back(dot ? vector::LoadOp::create(b, pairs, kBuf, ValueRange{add(row, idx(d))})
                             .getResult()
                       : rowVector(src, row, d));
    for (int64_t i = 0; i < w; ++i) {
      Value q = qv[i / keys], k = kv[i % keys];
      if (dot)
        acc[i] = x86vector::DotBF16Op::create(b, vecType(), acc[i] ? acc[i] : zeroVec(), q, k);
      else
        acc[i] = acc[i] ? fma(q, k, acc[i]) : arith::MulFOp::create(b, q, k).getResult();
    }
  }
  Value scores = sumLanes(acc);
  if (dot)
    scores = arith::MulFOp::create(b, scores, splat(f32(queryScale())));
  for (int64_t r = 0; r < rowCount; ++r)
    for (int64_t u = 0; u < keys; ++u)
      store(vector::ExtractOp::create(b, scores, ArrayRef<int64_t>{r * keys + u}), S,
            {add(r0, idx(r)), keyOf(t, u, keys)});
}

/// Partial tiles (or any with a score_mod): S = keep ? score_mod(S) : -inf
/// per element, at each row's own head and position.
void DecodeKernelBuilder::maskScores(Value k0, Value cols, Value full) {
  loop(rowLo, rowHi, 1, [&](Value r) {
    auto [head, pos] = rowOf(r);
    loop(0, cols, 1, [&](Value j) {
      Value kPos = add(k0, j);
      Value s = load(S, {r, j});
      auto onZero = [&](Value isZero) {
        ifThen(isZero, [&] { store(arith::ConstantIntOp::create(b, 1, 32), status, {idx(0)}); });
      };
      // A load outside its input reads nothing and reports the input.
      auto loadInput = [&](Operation *l, ArrayRef<Value> indices) {
        return modInputs.load(b, b.getLoc(), cast<LoadOp>(l), indices,
                              [&](OpBuilder &, int32_t code) {
                                store(arith::ConstantIntOp::create(b, code, 32), status,
                                      {idx(0)});
                              });
      };
      if (!op.getScoreMod().empty())
        s = inlineMod(b, b.getLoc(), op.getScoreMod(), {s, batch, head, pos, kPos}, onZero,
                      loadInput);
      Value keep = select(
          full, b.getI1Type(), [&] { return arith::ConstantIntOp::create(b, 1, 1).getResult(); },
          [&] {
            Value k = emitMaskKeeps(b, b.getLoc(), module, op.getMask(), pos, kPos, seqQ, seqKv);
            if (!op.getMaskMod().empty())
              k = arith::AndIOp::create(
                  b, k,
                  inlineMod(b, b.getLoc(), op.getMaskMod(), {batch, head, pos, kPos}, onZero,
                            loadInput));
            return k;
          });
      store(arith::SelectOp::create(b, keep, s, negInf()), S, {r, j});
    });
  });
}

/// Per row: m' = max(m, max_j S), P = exp(S - m') in place, l = l e^(m - m')
/// + sum P, ALPHA = e^(m - m'). A row with nothing kept yet shifts by 0, so
/// its P is exp(-inf) = 0, never NaN; every exponent is <= 0.
void DecodeKernelBuilder::softmax() {
  loop(rowLo, rowHi, 1, [&](Value r) {
    Value mx = splat(negInf());
    for (int64_t j = 0; j < blockKv; j += w)
      mx = plainMax(mx, loadVec(S, {r, idx(j)}));
    Value mOld = load(M, {r});
    Value mNew = arith::MaximumFOp::create(b, mOld, reduce(vector::CombiningKind::MAXNUMF, mx));
    Value dead = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf());
    Value shift = splat(arith::SelectOp::create(b, dead, f32(0), mNew));
    Value sum = splat(f32(0));
    for (int64_t j = 0; j < blockKv; j += w) {
      Value p = expOf(arith::SubFOp::create(b, loadVec(S, {r, idx(j)}), shift));
      storeVec(p, S, {r, idx(j)});
      sum = arith::AddFOp::create(b, sum, p);
    }
    Value alpha = expOf(arith::SubFOp::create(b, splat(mOld), shift));
    Value alpha0 = vector::ExtractOp::create(b, alpha, ArrayRef<int64_t>{0});
    Value total = reduce(vector::CombiningKind::ADD, sum);
    store(math::FmaOp::create(b, load(L, {r}), alpha0, total), L, {r});
    store(mNew, M, {r});
    store(alpha0, ALPHA, {r});
  });
}

/// Acc[r] = Acc[r] ALPHA[r] + sum_j P[r, j] v[k0 + j], a row block at a time
/// with its accumulators in half the registers: blocks of as many rows as
/// keep whole rows there (AVX-512, head_dim 128: 2), else runs of head_dim
/// vectors for one row. A run over part of each v row leaves the rest to
/// another pass over the tile, a pattern the hardware prefetchers follow
/// badly: f32 decode from memory was 1.1-1.3x slower with 4 rows in two runs.
/// The first run of the first block prefetches the split's next tile of v.
void DecodeKernelBuilder::accumulate(Value k0, Value cols) {
  int64_t vectors = dimPadded / w, budget = cfg.vectorRegisters / 2;
  int64_t most = kRowBlock;
  while (most > 1 && most * vectors > budget)
    most /= 2;
  forRowBlocks(most, [&](Value r0, int64_t rowCount) {
    int64_t run = std::min(vectors, budget / rowCount);
    for (int64_t c0 = 0; c0 < vectors; c0 += run) {
      Value prefetch = c0 == 0 ? eqIdx(r0, rowLo) : arith::ConstantIntOp::create(b, 0, 1);
      valueBlock(r0, rowCount, c0, std::min(run, vectors - c0), k0, cols, prefetch);
    }
  });
}

/// Head_dim vectors [c0, c0 + count) of rows [r0, r0 + rowCount): each v
/// vector loaded serves every row of the block.
void DecodeKernelBuilder::valueBlock(Value r0, int64_t rowCount, int64_t c0, int64_t count,
                                     Value k0, Value cols, Value prefetch) {
  Value src = wide ? VF : vBuf;
  SmallVector<Value> init;
  for (int64_t r = 0; r < rowCount; ++r) {
    Value alpha = splat(load(ALPHA, {add(r0, idx(r))}));
    for (int64_t c = c0; c < c0 + count; ++c)
      init.push_back(arith::MulFOp::create(b, loadVec(Acc, {add(r0, idx(r)), idx(c * w)}), alpha));
  }
  SmallVector<Value> sums = fold(idx(0), cols, init, [&](Value j, ValueRange acc) {
    ifThen(prefetch, [&] { prefetchNext(vBuf, vS, j, blockKv); });
    Value row = keyRow(vS, k0, j);
    SmallVector<Value> v, next;
    for (int64_t c = c0; c < c0 + count; ++c)
      v.push_back(rowVector(src, row, c * w));
    for (int64_t r = 0; r < rowCount; ++r) {
      Value p = splat(load(S, {add(r0, idx(r)), j}));
      for (int64_t c = 0; c < count; ++c)
        next.push_back(fma(p, v[c], acc[r * count + c]));
    }
    return next;
  });
  for (int64_t r = 0; r < rowCount; ++r)
    for (int64_t c = 0; c < count; ++c)
      storeVec(sums[r * count + c], Acc, {add(r0, idx(r)), idx((c0 + c) * w)});
}

/// Step `step` of `steps` of the first row block's pass over a tile: its
/// share of the split's next tile in `buf` (k during the scores, v during
/// P V), into L2, so that the reads overlap the FMAs. The item's KV heads'
/// passes share the tile's keys: pass h prefetches keys [h, h + 1) x
/// blockKv / perItem of every head of the item, in address order for a
/// token-major cache (a key's heads side by side). Each pass fetching its
/// own head's rows, a head stride apart, measured the same (f32 paged<16>,
/// from memory); address order is kept as the one that DRAM pages and
/// the hardware prefetchers favour.
void DecodeKernelBuilder::prefetchNext(Value buf, const Strides &s, Value step, int64_t steps) {
  int64_t bytes = elemType.getIntOrFloatBitWidth() / 8;
  int64_t perLine = kLineBytes / bytes;
  int64_t keysPerPass = llvm::divideCeil(blockKv, perItem);
  int64_t perStep = llvm::divideCeil(keysPerPass * perItem, steps);
  ifThen(hasNext, [&] {
    Value lastKey = sub(seqKv, idx(1));
    Value passKey = add(nextK0, mul(sub(kvHead, kvBase), idx(keysPerPass)));
    for (int64_t i = 0; i < perStep; ++i) {
      Value row = add(mul(step, idx(perStep)), idx(i)); // (key, head) in address order
      Value key = minIdx(add(passKey, div(row, idx(perItem))), lastKey);
      Value at = keyAt(s, key, add(kvBase, rem(row, idx(perItem))));
      for (int64_t d = 0; d < dim; d += perLine)
        memref::PrefetchOp::create(b, buf, ValueRange{add(at, idx(d))}, /*isWrite=*/false,
                                   /*localityHint=*/2, /*isDataCache=*/true);
    }
  });
}

void DecodeKernelBuilder::visitTile(Value tile, Value end) {
  hasNext = lt(add(tile, idx(1)), end);
  nextK0 = mul(add(tile, idx(1)), idx(blockKv));
  Value k0 = mul(tile, idx(blockKv));
  Value cols = minIdx(idx(blockKv), sub(seqKv, k0));
  auto [full, empty] = classify(k0, cols);
  auto pass = [&] {
    if (wide)
      widenTile(k0, cols);
    computeScores(k0, cols);
    Value partial = arith::XOrIOp::create(b, full, arith::ConstantIntOp::create(b, 1, 1));
    Value elementPass = arith::OrIOp::create(
        b, partial, arith::ConstantIntOp::create(b, !op.getScoreMod().empty(), 1));
    ifThen(elementPass, [&] { maskScores(k0, cols, full); });
    softmax();
    accumulate(k0, cols);
  };
  ifThen(arith::XOrIOp::create(b, empty, arith::ConstantIntOp::create(b, 1, 1)), [&] {
    if (perItem == 1) {
      kvHead = kvBase, rowLo = idx(0), rowHi = rows;
      pass();
      return;
    }
    // One KV head's rows after another over the same keys: the tile's lines
    // of every head are read while they are near each other in time.
    Value perHead = mul(idx(group), seqQ);
    loop(0, idx(perItem), 1, [&](Value h) {
      kvHead = add(kvBase, h);
      rowLo = mul(h, perHead);
      rowHi = add(rowLo, perHead);
      pass();
    });
  });
}

/// o_part = Acc / L (0 for a row with nothing kept), lse_part = m + log l
/// in natural units (-inf for such a row).
void DecodeKernelBuilder::writePartials(Value split) {
  loop(0, rows, 1, [&](Value r) {
    auto [head, pos] = rowOf(r);
    Value l = load(L, {r});
    Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, f32(0));
    Value factor = arith::SelectOp::create(b, empty, f32(0), arith::DivFOp::create(b, f32(1), l));
    auto [at, base] = partAt(head, split, pos);
    loop(0, idx(dim), 1, [&](Value d) {
      store(arith::MulFOp::create(b, load(Acc, {r, d}), factor), oPart, {add(base, d)});
    });
    Value m = load(M, {r});
    if (base2)
      m = arith::MulFOp::create(b, m, f32(kLn2));
    Value lse = arith::AddFOp::create(b, m, math::LogOp::create(b, l));
    store(arith::SelectOp::create(b, empty, negInf(), lse), lsePart, {at});
  });
}

void DecodeKernelBuilder::buildPartial(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  readCommon(args);
  batch = args[coords], kvBase = mul(args[coords + 1], idx(perItem));
  Value split = args[coords + 2];
  // kv_cache: this sequence's length (the runtime checked it against the cache).
  if (pageSize > 0)
    tableStride = readParam(ATTNC_P_BLOCK_TABLE_STRIDES);
  if (pageSize >= 0)
    seqKv = arith::IndexCastOp::create(b, b.getIndexType(),
                                       load(lensBuf, {mul(batch, readParam(ATTNC_P_KV_LENS_STRIDES))}));
  rows = mul(idx(perItem * group), seqQ);
  Type f32Type = b.getF32Type();
  S = stackBuffer({maxRows, blockKv}, f32Type);
  Acc = stackBuffer({maxRows, dimPadded}, f32Type);
  M = stackBuffer({maxRows}, f32Type);
  L = stackBuffer({maxRows}, f32Type);
  ALPHA = stackBuffer({maxRows}, f32Type);
  if (dot)
    QP = stackBuffer({maxRows, dim}, elemType);
  else
    QS = stackBuffer({maxRows, dimPadded}, f32Type);
  if (wide) {
    // Zero once: the padding columns [dim, dimPadded) are never written.
    KF = stackBuffer({blockKv * dimPadded}, f32Type);
    VF = stackBuffer({blockKv * dimPadded}, f32Type);
    loop(0, idx(blockKv * dimPadded), 1, [&](Value i) {
      store(f32(0), KF, {i});
      store(f32(0), VF, {i});
    });
  }
  loadQueries();
  auto [first, end] = splitTiles(split);
  loop(first, end, 1, [&](Value tile) { visitTile(tile, end); });
  writePartials(split);
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

/// Row (head, pos): out and lse from the splits' partials, in split order.
void DecodeKernelBuilder::mergeRow(Value head, Value pos) {
  SmallVector<Value> at, row;
  for (int64_t s = 0; s < splits; ++s) {
    auto [lse, o] = partAt(head, idx(s), pos);
    at.push_back(lse);
    row.push_back(o);
  }
  Value mx = negInf();
  for (int64_t s = 0; s < splits; ++s)
    mx = arith::MaximumFOp::create(b, mx, load(lsePart, {at[s]}));
  Value dead = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mx, negInf());
  Value shift = arith::SelectOp::create(b, dead, f32(0), mx);
  SmallVector<Value> weights;
  Value total = f32(0);
  for (int64_t s = 0; s < splits; ++s) {
    Value x = arith::SubFOp::create(b, load(lsePart, {at[s]}), shift);
    weights.push_back(math::ExpOp::create(b, x));
    total = arith::AddFOp::create(b, total, weights.back());
  }
  // A row with nothing kept: out = 0 (every weight is 0), lse = -inf.
  Value inv = arith::SelectOp::create(b, dead, f32(0), arith::DivFOp::create(b, f32(1), total));
  Value outBase = offset(outS, batch, head, pos);
  loop(0, idx(dim), 1, [&](Value d) {
    Value x = f32(0);
    for (int64_t s = 0; s < splits; ++s) {
      Value o = load(oPart, {add(row[s], d)});
      x = math::FmaOp::create(b, weights[s], o, x);
    }
    x = arith::MulFOp::create(b, x, inv);
    store(roundFromF32(b, b.getLoc(), x, elemType, cfg.bf16Dot), outBuf, {add(outBase, d)});
  });
  if (op.hasOutput(OutputKind::lse)) {
    Value lse = arith::AddFOp::create(b, shift, math::LogOp::create(b, total));
    store(arith::SelectOp::create(b, dead, negInf(), lse), lseBuf,
          {offset(lseS, batch, head, pos)});
  }
}

void DecodeKernelBuilder::buildMerge(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  readCommon(args);
  batch = args[coords];
  Value head = args[coords + 1];
  loop(0, seqQ, 1, [&](Value pos) { mergeRow(head, pos); });
  func::ReturnOp::create(b, ValueRange{load(status, {idx(0)})});
}

LogicalResult mlir::attn::buildCpuDecodeKernel(FlashOp op, const CpuKernelConfig &config) {
  auto kernel = cast<KernelOp>(op->getParentOp());
  MLIRContext *ctx = kernel.getContext();
  Type elem = op.getDtype();
  if (op.getTileKv() % config.vectorWidth != 0)
    return op.emitOpError() << "block_kv (" << op.getTileKv()
                            << ") must be a multiple of the CPU target's vector width ("
                            << config.vectorWidth << " f32 lanes)";
  int64_t splits = decodeSplitCount(*op.getNumSplits());
  int64_t minTiles = decodeMinTiles(*op.getNumSplits(), op.getTileKv());
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, elem);
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  Type index = b.getIndexType();
  SmallVector<Type> args = {elemBuf, elemBuf, elemBuf, elemBuf, f32Buf};
  Type i32Buf = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  if (op.getPageSize()) // kv_lens, then with pages block_table
    args.append(*op.getPageSize() ? 2 : 1, i32Buf);
  if (ArrayAttr inputs = op.getInputsAttr())
    for (auto decl : inputs.getAsRange<ModInputAttr>())
      args.push_back(MemRefType::get({ShapedType::kDynamic}, decl.getElementType()));
  args.append({f32Buf, f32Buf, i64Buf});
  for (auto [phase, coords] : {std::pair<StringRef, int>{"", 3}, {"merge", 2}}) {
    SmallVector<Type> types(args);
    types.append(coords, index);
    std::string name = phaseFunctionName(kernel.getSymName(), "tile", phase);
    auto func = func::FuncOp::create(b, name, FunctionType::get(ctx, types, {b.getI32Type()}));
    func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    ImplicitLocOpBuilder body(op.getLoc(), ctx);
    DecodeKernelBuilder builder(op, config, body, splits, minTiles);
    if (phase.empty())
      builder.buildPartial(func);
    else
      builder.buildMerge(func);
  }
  return success();
}
