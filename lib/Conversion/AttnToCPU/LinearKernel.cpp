//===- LinearKernel.cpp - attn.linear_attention to CPU tile functions -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A linear attention kernel's tile functions (KernelInterface.h,
// linearInterface, gives their phases). Every product is a register block of
// broadcast scalars times rows of vectors, in f32 on the item's stack:
//
//   Q  = scale * phi(q) rows of a chunk     QF [chunk, head_dim]
//   K  = phi(k), transposed                 KT [head_dim, chunk]
//   V  = v rows                             VF [chunk, value_dim]
//   S, z: the state and normalizer          SF [head_dim, value_dim], ZF [head_dim]
//
// Causal, item (b, g), chunk by chunk: for each query head of g, A = Q K^T
// with the keys after each row set to 0 (only the key vectors up to the row
// block's last row are computed), out = (Q S + A V) / (Q . z + rowsum A +
// eps); then S += K^T V and z += colsum K, once per chunk for the group.
// Non-causal: phase "state" folds every chunk of keys into S and z and
// stores them in the scratch; phase "attention" computes a tile's rows as
// Q S / (Q . z + eps). The vectors run along the keys (A) and along
// value_dim (out, S); padding lanes and rows are 0 and never stored.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/ExpNonPositive.h"
#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Conversion/AttnToCPU/TransposeSquare.h"

#include "FlashKernelBuilder.h"
#include "LoopBuilder.h"
#include "attnc/Conversion/Common/KernelEntry.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

constexpr double kLog2e = 1.44269504088896341;

class LinearKernelBuilder : VectorLoopBuilder {
public:
  LinearKernelBuilder(LinearAttentionOp op, const CpuKernelConfig &config,
                      ImplicitLocOpBuilder &b)
      : VectorLoopBuilder(b, config.vectorWidth), op(op), cfg(config), dk(op.getDim()),
        dv(op.getValueDimOrDefault()), dkP(roundUp(dk)), dvP(roundUp(dv)),
        chunk(op.getCausal() ? op.getChunkOrDefault() : kRowsPerTile),
        group(op.getHeads() / op.getKvHeads()), elemType(op.getDtype()),
        // Register blocks of 4 rows x 2 vectors (16 registers) or 4 x 4 (32).
        blockRows(4), blockVectors(w >= 16 ? 4 : 2) {}

  /// The non-causal kernel's rows per query tile, and keys per chunk.
  static constexpr int64_t kRowsPerTile = 64;

  void buildCausal(func::FuncOp func);
  void buildState(func::FuncOp func);
  void buildRows(func::FuncOp func);

private:
  int64_t roundUp(int64_t n) const { return (n + w - 1) / w * w; }
  Value sum(Value x) { return vector::ReductionOp::create(b, vector::CombiningKind::ADD, x); }

  ArrayRef<BlockArgument> readArgs(ArrayRef<BlockArgument> args);
  Value featureMap(Value x, int64_t valid);
  void zeroFill(Value buf, ArrayRef<int64_t> shape);
  void loadQueries(Value head, Value q0, Value rows);
  void loadKeysValues(Value k0, Value rows);
  void loadState(Value stateBuf, Value normBuf, int64_t stateParam, int64_t normParam,
                 bool optional);
  void storeState(Value stateBuf, Value normBuf, int64_t stateParam, int64_t normParam);
  void scores(Value i0, int64_t rows);
  void outputRows(Value head, Value q0, Value rows, bool intra);
  void storeRow(Value x, Value at, int64_t valid);
  void updateState(Value rows);

  LinearAttentionOp op;
  CpuKernelConfig cfg;
  int64_t dk, dv, dkP, dvP, chunk, group;
  Type elemType;
  int64_t blockRows, blockVectors;
  Value qBuf, kBuf, vBuf, outBuf, s0Buf, z0Buf, sBuf, zBuf;
  Value batch, kvHead;
  Value QF, KT, VF, A, SF, ZF;
};

/// The views (q, k, v, out, then the state tensors the kernel has), params
/// and the stack buffers; returns the item's coordinates.
ArrayRef<BlockArgument> LinearKernelBuilder::readArgs(ArrayRef<BlockArgument> args) {
  qBuf = args[0], kBuf = args[1], vBuf = args[2], outBuf = args[3];
  size_t at = 4;
  if (op.getCarryState()) {
    s0Buf = args[4], z0Buf = args[5], sBuf = args[6], zBuf = args[7];
    at = 8;
  } else if (!op.getCausal()) {
    sBuf = args[4], zBuf = args[5];
    at = 6;
  }
  params = args[at];
  readAttentionParams();
  if (op.getCausal())
    seqKv = seqQ;
  QF = stackBuffer({chunk, dkP});
  KT = stackBuffer({dkP, chunk});
  VF = stackBuffer({chunk, dvP});
  A = stackBuffer({chunk, chunk});
  SF = stackBuffer({dkP, dvP});
  ZF = stackBuffer({dkP});
  // Rows of KT past head_dim are never written: 0 once.
  zeroFill(KT, {dkP, chunk});
  return args.drop_front(at + 1);
}

void LinearKernelBuilder::zeroFill(Value buf, ArrayRef<int64_t> shape) {
  Value zero = zeroVec();
  if (shape.size() == 1) {
    for (int64_t d = 0; d < shape[0]; d += w)
      storeVec(zero, buf, {idx(d)});
    return;
  }
  loop(0, shape[0], 1, [&](Value r) {
    for (int64_t d = 0; d < shape[1]; d += w)
      storeVec(zero, buf, {r, idx(d)});
  });
}

/// phi(x) per lane; lanes from `valid` on are 0 (elu + 1 of a padding 0 is 1).
Value LinearKernelBuilder::featureMap(Value x, int64_t valid) {
  Value zero = zeroVec();
  switch (op.getFeatureMap()) {
  case FeatureMap::identity:
    return x;
  case FeatureMap::relu:
    return arith::MaximumFOp::create(b, x, zero);
  case FeatureMap::elu1:
    break;
  }
  Value neg = arith::MinimumFOp::create(b, x, zero);
  Value t = arith::MulFOp::create(b, neg, splat(f32(kLog2e)));
  Value e = emitExp2NonPositive(b, b.getLoc(), t, ExpAccuracy::f32, cfg.avx512Scalef);
  Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, zero);
  Value y = arith::SelectOp::create(b, positive, arith::AddFOp::create(b, x, splat(f32(1))), e);
  if (valid == w)
    return y;
  Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                            ValueRange{idx(valid)});
  return arith::SelectOp::create(b, mask, y, zero);
}

/// QF = scale * phi(q) of `head`'s rows [q0, q0 + rows); 0 past them.
void LinearKernelBuilder::loadQueries(Value head, Value q0, Value rows) {
  Value scale = splat(f32(op.getScaleOrDefault()));
  loop(0, chunk, 1, [&](Value i) {
    ifThenElse(
        lt(i, rows),
        [&] {
          Value base = offset(qS, batch, head, add(q0, i));
          for (int64_t d = 0; d < dkP; d += w) {
            int64_t valid = std::min(w, dk - d);
            Value x = featureMap(loadLanes(qBuf, add(base, idx(d)), valid), valid);
            storeVec(arith::MulFOp::create(b, x, scale), QF, {i, idx(d)});
          }
        },
        [&] {
          for (int64_t d = 0; d < dkP; d += w)
            storeVec(zeroVec(), QF, {i, idx(d)});
        });
  });
}

/// KT = phi(k)^T and VF = v of the keys [k0, k0 + rows); 0 past them. KT
/// is written w keys x w lanes at a time, transposed in registers.
void LinearKernelBuilder::loadKeysValues(Value k0, Value rows) {
  loop(0, chunk, w, [&](Value j0) {
    for (int64_t d = 0; d < dkP; d += w) {
      int64_t valid = std::min(w, dk - d);
      SmallVector<Value> block;
      for (int64_t r = 0; r < w; ++r) {
        Value j = add(j0, idx(r));
        block.push_back(select(lt(j, rows), vecType(), [&] {
          Value kRow = offset(kS, batch, kvHead, add(k0, j));
          return featureMap(loadLanes(kBuf, add(kRow, idx(d)), valid), valid);
        }, [&] { return zeroVec(); }));
      }
      emitTransposeSquare(b, b.getLoc(), block);
      for (int64_t l = 0; l < w; ++l)
        storeVec(block[l], KT, {idx(d + l), j0});
    }
  });
  loop(0, chunk, 1, [&](Value j) {
    ifThenElse(
        lt(j, rows),
        [&] {
          Value vRow = offset(vS, batch, kvHead, add(k0, j));
          for (int64_t e = 0; e < dvP; e += w)
            storeVec(loadLanes(vBuf, add(vRow, idx(e)), std::min(w, dv - e)), VF, {j, idx(e)});
        },
        [&] {
          for (int64_t e = 0; e < dvP; e += w)
            storeVec(zeroVec(), VF, {j, idx(e)});
        });
  });
}

/// SF and ZF from a state tensor and its normalizer (strides at the params
/// given), or 0 where `optional` and they were passed as NULL.
void LinearKernelBuilder::loadState(Value stateBuf, Value normBuf, int64_t stateParam,
                                    int64_t normParam, bool optional) {
  zeroFill(SF, {dkP, dvP});
  zeroFill(ZF, {dkP});
  auto given = [&](Value buf) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, memref::DimOp::create(b, buf, 0),
                                 idx(0));
  };
  auto readState = [&] {
    Strides s = readStrides(stateParam);
    loop(0, dk, 1, [&](Value d) {
      Value row = offset(s, batch, kvHead, d);
      for (int64_t e = 0; e < dvP; e += w)
        storeVec(loadLanes(stateBuf, add(row, idx(e)), std::min(w, dv - e)), SF, {d, idx(e)});
    });
  };
  auto readNorm = [&] {
    Value row = add(mul(batch, readParam(normParam)), mul(kvHead, readParam(normParam + 1)));
    loop(0, dk, 1, [&](Value d) { store(load(normBuf, {add(row, d)}), ZF, {d}); });
  };
  if (!optional) {
    readState();
    readNorm();
    return;
  }
  ifThen(given(stateBuf), readState);
  ifThen(given(normBuf), readNorm);
}

/// SF and ZF into a state tensor and its normalizer.
void LinearKernelBuilder::storeState(Value stateBuf, Value normBuf, int64_t stateParam,
                                     int64_t normParam) {
  Strides s = readStrides(stateParam);
  Value normRow = add(mul(batch, readParam(normParam)), mul(kvHead, readParam(normParam + 1)));
  loop(0, dk, 1, [&](Value d) {
    Value row = offset(s, batch, kvHead, d);
    for (int64_t e = 0; e < dv; ++e)
      store(load(SF, {d, idx(e)}), stateBuf, {add(row, idx(e))});
    store(load(ZF, {d}), normBuf, {add(normRow, d)});
  });
}

/// A's rows [i0, i0 + rows) = Q K^T over the key vectors up to the last
/// row, keys after each row set to 0.
void LinearKernelBuilder::scores(Value i0, int64_t rows) {
  int64_t vectors = chunk / w, perBlock = std::min(blockVectors, vectors);
  // Key vectors [0, ceil((i0 + rows) / w)), in whole blocks.
  Value keys = add(i0, idx(rows));
  Value blocks = arith::CeilDivSIOp::create(b, keys, idx(perBlock * w));
  VectorType laneType = VectorType::get({w}, b.getI32Type());
  SmallVector<int32_t> lanes;
  for (int64_t l = 0; l < w; ++l)
    lanes.push_back(int32_t(l));
  Value iota = arith::ConstantOp::create(b, DenseElementsAttr::get(laneType, ArrayRef(lanes)));
  loop(0, blocks, 1, [&](Value blk) {
    Value j0 = mul(blk, idx(perBlock * w));
    SmallVector<Value> init(rows * perBlock, zeroVec());
    SmallVector<Value> acc = fold(idx(0), idx(dk), init, [&](Value d, ValueRange acc) {
      SmallVector<Value> next, k;
      for (int64_t c = 0; c < perBlock; ++c)
        k.push_back(loadVec(KT, {d, add(j0, idx(c * w))}));
      for (int64_t r = 0; r < rows; ++r) {
        Value qv = splat(load(QF, {add(i0, idx(r)), d}));
        for (int64_t c = 0; c < perBlock; ++c)
          next.push_back(fma(qv, k[c], acc[r * perBlock + c]));
      }
      return next;
    });
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < perBlock; ++c) {
        Value i = add(i0, idx(r)), j = add(j0, idx(c * w));
        auto asI32 = [&](Value x) {
          return vector::BroadcastOp::create(
              b, laneType, arith::IndexCastOp::create(b, b.getI32Type(), x));
        };
        Value key = arith::AddIOp::create(b, asI32(j), iota);
        Value keep = arith::CmpIOp::create(b, arith::CmpIPredicate::sle, key, asI32(i));
        Value x = arith::SelectOp::create(b, keep, acc[r * perBlock + c], zeroVec());
        storeVec(x, A, {i, j});
      }
  });
}

/// out rows [q0, q0 + rows) of `head` from QF: Q S (+ A V of the keys up
/// to each row block's last, `intra`), over Q . z (+ rowsum A) + eps.
void LinearKernelBuilder::outputRows(Value head, Value q0, Value rows, bool intra) {
  int64_t vectors = dvP / w;
  loop(0, chunk, blockRows, [&](Value i0) {
    ifThen(lt(i0, rows), [&] {
      if (intra)
        scores(i0, blockRows);
      Value keys = intra ? add(i0, idx(blockRows)) : idx(0);
      SmallVector<Value> factors;
      for (int64_t r = 0; r < blockRows; ++r) {
        Value i = add(i0, idx(r)), den = zeroVec();
        for (int64_t d = 0; d < dkP; d += w)
          den = fma(loadVec(QF, {i, idx(d)}), loadVec(ZF, {idx(d)}), den);
        Value total = sum(den);
        if (intra) { // the masked keys are 0: whole vectors up to the block's end
          Value vecs = arith::CeilDivSIOp::create(b, keys, idx(w));
          SmallVector<Value> rowSum =
              fold(idx(0), vecs, {zeroVec()}, [&](Value jv, ValueRange acc) {
                Value x = loadVec(A, {i, mul(jv, idx(w))});
                return SmallVector<Value>{arith::AddFOp::create(b, acc[0], x)};
              });
          total = arith::AddFOp::create(b, total, sum(rowSum[0]));
        }
        Value norm = arith::AddFOp::create(b, total, f32(op.getEpsOrDefault()));
        Value zeroNorm = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, norm, f32(0));
        Value inv = arith::DivFOp::create(b, f32(1), norm);
        factors.push_back(!op.getNormalize()
                              ? f32(1)
                              : arith::SelectOp::create(b, zeroNorm, f32(0), inv).getResult());
      }
      for (int64_t c0 = 0; c0 < vectors; c0 += blockVectors) {
        int64_t vecs = std::min(blockVectors, vectors - c0);
        auto product = [&](Value src, Value rowsOf) {
          return [&, src, rowsOf](Value l, ValueRange acc) {
            SmallVector<Value> next, y;
            for (int64_t c = 0; c < vecs; ++c)
              y.push_back(loadVec(src, {l, idx((c0 + c) * w)}));
            for (int64_t r = 0; r < blockRows; ++r) {
              Value x = splat(load(rowsOf, {add(i0, idx(r)), l}));
              for (int64_t c = 0; c < vecs; ++c)
                next.push_back(fma(x, y[c], acc[r * vecs + c]));
            }
            return next;
          };
        };
        SmallVector<Value> acc(blockRows * vecs, zeroVec());
        acc = fold(idx(0), idx(dk), acc, product(SF, QF));
        if (intra)
          acc = fold(idx(0), keys, acc, product(VF, A));
        for (int64_t r = 0; r < blockRows; ++r)
          ifThen(lt(add(i0, idx(r)), rows), [&] {
            Value base = offset(outS, batch, head, add(q0, add(i0, idx(r))));
            for (int64_t c = 0; c < vecs; ++c)
              storeRow(arith::MulFOp::create(b, acc[r * vecs + c], splat(factors[r])),
                       add(base, idx((c0 + c) * w)), std::min(w, dv - (c0 + c) * w));
          });
      }
    });
  });
}

/// `valid` lanes of x into out at `at`, rounded to its element type.
void LinearKernelBuilder::storeRow(Value x, Value at, int64_t valid) {
  if (!elemType.isF32()) {
    for (int64_t lane = 0; lane < valid; ++lane) {
      Value e = vector::ExtractOp::create(b, x, ArrayRef<int64_t>{lane});
      store(roundFromF32(b, b.getLoc(), e, elemType, cfg.bf16Dot), outBuf,
            {add(at, idx(lane))});
    }
    return;
  }
  if (valid == w) {
    vector::StoreOp::create(b, x, outBuf, ValueRange{at});
    return;
  }
  Value mask = vector::CreateMaskOp::create(b, VectorType::get({w}, b.getI1Type()),
                                            ValueRange{idx(valid)});
  vector::MaskedStoreOp::create(b, outBuf, ValueRange{at}, mask, x);
}

/// S += K^T V and z += colsum K over the chunk's `rows` keys.
void LinearKernelBuilder::updateState(Value rows) {
  int64_t vectors = dvP / w;
  loop(0, dkP, blockRows, [&](Value d0) {
    for (int64_t c0 = 0; c0 < vectors; c0 += blockVectors) {
      int64_t vecs = std::min(blockVectors, vectors - c0);
      SmallVector<Value> acc;
      for (int64_t r = 0; r < blockRows; ++r)
        for (int64_t c = 0; c < vecs; ++c)
          acc.push_back(loadVec(SF, {add(d0, idx(r)), idx((c0 + c) * w)}));
      acc = fold(idx(0), rows, acc, [&](Value j, ValueRange acc) {
        SmallVector<Value> next, y;
        for (int64_t c = 0; c < vecs; ++c)
          y.push_back(loadVec(VF, {j, idx((c0 + c) * w)}));
        for (int64_t r = 0; r < blockRows; ++r) {
          Value x = splat(load(KT, {add(d0, idx(r)), j}));
          for (int64_t c = 0; c < vecs; ++c)
            next.push_back(fma(x, y[c], acc[r * vecs + c]));
        }
        return next;
      });
      for (int64_t r = 0; r < blockRows; ++r)
        for (int64_t c = 0; c < vecs; ++c)
          storeVec(acc[r * vecs + c], SF, {add(d0, idx(r)), idx((c0 + c) * w)});
    }
  });
  loop(0, dk, 1, [&](Value d) {
    Value s = zeroVec();
    for (int64_t j = 0; j < chunk; j += w)
      s = arith::AddFOp::create(b, s, loadVec(KT, {d, idx(j)}));
    store(arith::AddFOp::create(b, load(ZF, {d}), sum(s)), ZF, {d});
  });
}

/// Item (b, g) of a causal kernel: the chunks in order.
void LinearKernelBuilder::buildCausal(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  batch = coords[0], kvHead = coords[1];
  bool carry = op.getCarryState();
  if (carry) {
    loadState(s0Buf, z0Buf, ATTNC_P_INITIAL_STATE_STRIDES, ATTNC_P_INITIAL_NORM_STRIDES, true);
  } else {
    zeroFill(SF, {dkP, dvP});
    zeroFill(ZF, {dkP});
  }
  Value chunks = arith::CeilDivSIOp::create(b, seqQ, idx(chunk));
  loop(0, chunks, 1, [&](Value c) {
    Value c0 = mul(c, idx(chunk));
    Value rows = minIdx(idx(chunk), arith::SubIOp::create(b, seqQ, c0));
    loadKeysValues(c0, rows);
    loop(0, group, 1, [&](Value h) {
      Value head = add(mul(kvHead, idx(group)), h);
      loadQueries(head, c0, rows);
      outputRows(head, c0, rows, /*intra=*/true);
    });
    updateState(rows);
  });
  if (carry)
    storeState(sBuf, zBuf, ATTNC_P_FINAL_STATE_STRIDES, ATTNC_P_FINAL_NORM_STRIDES);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

/// Item (b, g) of a non-causal kernel's state phase: every key into S, z.
void LinearKernelBuilder::buildState(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  batch = coords[0], kvHead = coords[1];
  zeroFill(SF, {dkP, dvP});
  zeroFill(ZF, {dkP});
  Value chunks = arith::CeilDivSIOp::create(b, seqKv, idx(chunk));
  loop(0, chunks, 1, [&](Value c) {
    Value k0 = mul(c, idx(chunk));
    loadKeysValues(k0, minIdx(idx(chunk), arith::SubIOp::create(b, seqKv, k0)));
    updateState(minIdx(idx(chunk), arith::SubIOp::create(b, seqKv, k0)));
  });
  storeState(sBuf, zBuf, ATTNC_P_KV_STATE_STRIDES, ATTNC_P_KV_NORM_STRIDES);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

/// Item (b, h, t) of a non-causal kernel: query tile t's rows from S, z.
void LinearKernelBuilder::buildRows(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> coords = readArgs(entry->getArguments());
  batch = coords[0];
  Value head = coords[1];
  kvHead = arith::DivUIOp::create(b, head, idx(group));
  loadState(sBuf, zBuf, ATTNC_P_KV_STATE_STRIDES, ATTNC_P_KV_NORM_STRIDES, false);
  Value q0 = mul(coords[2], idx(chunk));
  Value rows = minIdx(idx(chunk), arith::SubIOp::create(b, seqQ, q0));
  loadQueries(head, q0, rows);
  outputRows(head, q0, rows, /*intra=*/false);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

} // namespace

LogicalResult mlir::attn::buildCpuLinearKernel(LinearAttentionOp op,
                                               const CpuKernelConfig &config) {
  auto kernel = cast<KernelOp>(op->getParentOp());
  MLIRContext *ctx = kernel.getContext();
  ImplicitLocOpBuilder b(kernel.getLoc(), ctx);
  b.setInsertionPoint(kernel);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, op.getDtype());
  Type f32Buf = MemRefType::get({ShapedType::kDynamic}, b.getF32Type());
  Type i64Buf = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
  SmallVector<Type> args = {elemBuf, elemBuf, elemBuf, elemBuf};
  bool causal = op.getCausal();
  args.append(op.getCarryState() ? 4 : causal ? 0 : 2, f32Buf);
  args.push_back(i64Buf);
  using Phase = void (LinearKernelBuilder::*)(func::FuncOp);
  SmallVector<std::tuple<StringRef, int64_t, Phase>> phases;
  if (causal)
    phases.push_back({"", 2, &LinearKernelBuilder::buildCausal});
  else
    phases.append({{"", 2, &LinearKernelBuilder::buildState},
                   {"attention", 3, &LinearKernelBuilder::buildRows}});
  for (auto [phase, rank, build] : phases) {
    func::FuncOp func = createTileFunction(b, kernel, args, phase, rank);
    ImplicitLocOpBuilder body(op.getLoc(), ctx);
    LinearKernelBuilder builder(op, config, body);
    (builder.*build)(func);
  }
  return success();
}
