//===- TileClassifier.cpp - full / partial / empty tiles of a mask --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The rules are attnc::mask::Classifier<E> (attnc/Support/MaskRules.h), run on
// the attribute's toMaskRule(). Integers use the header's IntEmitter; this file
// adds only IREmitter, which speaks the same vocabulary in arith / scf /
// memref ops on `index` values, so the kernel's classification is the rule
// itself rather than a transcription of it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Transforms/TileClassifier.h"

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Emits ops on `index` values and i1, or, with `lanes` set, on vectors of
/// them (one lane per position; only the vocabulary windows use is valid then).
struct IREmitter {
  using Int = Value;
  using Bool = Value;
  OpBuilder &b;
  Location loc;
  /// Holds the block-layout tables: a builtin.module, or a gpu.module for
  /// device code (any op with one block of symbols).
  Operation *module;
  int64_t lanes = 0;

  Int c(int64_t v) {
    if (!lanes)
      return arith::ConstantIndexOp::create(b, loc, v);
    auto type = VectorType::get({lanes}, b.getIndexType());
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getIndexAttr(v)));
  }
  Bool t(bool v) {
    if (!lanes)
      return arith::ConstantIntOp::create(b, loc, v, 1);
    auto type = VectorType::get({lanes}, b.getI1Type());
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, v));
  }
  Int add(Int x, Int y) { return arith::AddIOp::create(b, loc, x, y); }
  Int sub(Int x, Int y) { return arith::SubIOp::create(b, loc, x, y); }
  Int mul(Int x, Int y) { return arith::MulIOp::create(b, loc, x, y); }
  Int floorDiv(Int x, int64_t d) {
    return arith::FloorDivSIOp::create(b, loc, x, c(d));
  }
  Int min(Int x, Int y) { return arith::MinSIOp::create(b, loc, x, y); }
  Int max(Int x, Int y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Bool cmp(arith::CmpIPredicate p, Int x, Int y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Bool lt(Int x, Int y) { return cmp(arith::CmpIPredicate::slt, x, y); }
  Bool le(Int x, Int y) { return cmp(arith::CmpIPredicate::sle, x, y); }
  Bool eq(Int x, Int y) { return cmp(arith::CmpIPredicate::eq, x, y); }
  Bool land(Bool x, Bool y) { return arith::AndIOp::create(b, loc, x, y); }
  Bool lor(Bool x, Bool y) { return arith::OrIOp::create(b, loc, x, y); }
  Bool lnot(Bool x) { return arith::XOrIOp::create(b, loc, x, t(true)); }
  Int xorShr(Int x, int s) {
    return arith::XOrIOp::create(b, loc, x,
                                 arith::ShRUIOp::create(b, loc, x, c(s)));
  }
  Int remU(Int x, Int y) { return arith::RemUIOp::create(b, loc, x, y); }

  /// A constant i8 table in a private memref.global, one per distinct table.
  Bool lookup(const std::vector<bool> &table, Int index) {
    auto type = MemRefType::get({int64_t(table.size())}, b.getI8Type());
    SmallVector<int8_t> bytes(table.begin(), table.end());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI8Type()), ArrayRef(bytes));
    // One private constant per distinct table, named by order of creation so
    // the same spec always gives the same object.
    std::string name;
    int count = 0;
    Block &symbols = module->getRegion(0).front();
    for (auto global : symbols.getOps<memref::GlobalOp>()) {
      if (!global.getSymName().starts_with("attn_block_layout_"))
        continue;
      ++count;
      if (global.getInitialValueAttr() == init)
        name = global.getSymName().str();
    }
    if (name.empty()) {
      name = "attn_block_layout_" + std::to_string(count);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&symbols);
      memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                               init, /*constant=*/true, /*alignment=*/nullptr);
    }
    Value global = memref::GetGlobalOp::create(b, loc, type, name);
    Value byte = memref::LoadOp::create(b, loc, global, index);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, byte,
                                 arith::ConstantIntOp::create(b, loc, 0, 8));
  }

  template <typename Fn>
  std::pair<Bool, Bool> foldBlocks(Int qLo, Int qHi, Int kLo, Int kHi, int64_t,
                                   int64_t, Fn keep) {
    Value one = c(1);
    auto outer = scf::ForOp::create(
        b, loc, qLo, add(qHi, one), one, ValueRange{t(true), t(false)},
        [&](OpBuilder &ob, Location, Value qb, ValueRange acc) {
          IREmitter oe{ob, loc, module};
          auto inner = scf::ForOp::create(
              ob, loc, kLo, oe.add(kHi, oe.c(1)), oe.c(1), acc,
              [&](OpBuilder &ib, Location, Value kb, ValueRange acc2) {
                IREmitter ie{ib, loc, module};
                Value k = keep(ie, qb, kb);
                scf::YieldOp::create(
                    ib, loc,
                    ValueRange{ie.land(acc2[0], k), ie.lor(acc2[1], k)});
              });
          scf::YieldOp::create(ob, loc, inner.getResults());
        });
    return {outer.getResult(0), outer.getResult(1)};
  }
  template <typename Fn> Bool anyOf(int64_t n, Fn fn) {
    Value any = t(false);
    for (int64_t r = 0; r < n; ++r) // n is a small static count (random blocks)
      any = lor(any, fn(r));
    return any;
  }
};

} // namespace

/// The attribute's plain-data rule. Masks reaching here are verified, so the
/// cast only fails on a caller's bug.
static attnc::mask::Mask toRule(Attribute mask) {
  return cast<MaskAttrInterface>(mask).toMaskRule();
}

TileClass mlir::attn::classifyTile(Attribute mask, bool hasMaskMod,
                                   const TileBounds<int64_t> &tile) {
  return attnc::mask::classifyTile(toRule(mask), hasMaskMod, tile);
}

bool mlir::attn::maskKeeps(Attribute mask, int64_t q, int64_t kv, int64_t seqQ,
                           int64_t seqKv) {
  return attnc::mask::isKept(toRule(mask), q, kv, seqQ, seqKv);
}

int64_t mlir::attn::countKeptPairs(Attribute mask, int64_t seqQ,
                                   int64_t seqKv) {
  return attnc::mask::countKeptPairs(toRule(mask), seqQ, seqKv);
}

std::pair<Value, Value>
mlir::attn::emitTileClass(OpBuilder &b, Location loc, Operation *module,
                          Attribute mask, bool hasMaskMod,
                          const TileBounds<Value> &tile) {
  IREmitter e{b, loc, module};
  auto [full, empty] =
      attnc::mask::Classifier<IREmitter>(e).classify(toRule(mask), tile);
  if (hasMaskMod)
    full = e.t(false);
  return {full, empty};
}

bool mlir::attn::canEmitMaskKeepsVector(Attribute mask) {
  return attnc::mask::isArithmeticOnly(toRule(mask));
}

Value mlir::attn::emitMaskKeepsVector(OpBuilder &b, Location loc, Attribute mask,
                                      Value q, Value kv, Value seqQ, Value seqKv) {
  int64_t lanes = cast<VectorType>(q.getType()).getNumElements();
  IREmitter e{b, loc, nullptr, lanes};
  auto splat = [&](Value x) {
    return vector::BroadcastOp::create(b, loc, q.getType(), x).getResult();
  };
  TileBounds<Value> t{q, e.add(q, e.c(1)), kv, e.add(kv, e.c(1)), splat(seqQ), splat(seqKv)};
  return attnc::mask::Classifier<IREmitter>(e).classify(toRule(mask), t).first;
}

std::pair<Value, Value> mlir::attn::emitKeyRange(OpBuilder &b, Location loc,
                                                 Attribute mask, Value q0, Value q1,
                                                 Value seqQ, Value seqKv) {
  IREmitter e{b, loc, nullptr};
  TileBounds<Value> t{q0, q1, e.c(0), seqKv, seqQ, seqKv};
  return attnc::mask::Classifier<IREmitter>(e).keyRange(toRule(mask), t);
}

Value mlir::attn::emitMaskKeeps(OpBuilder &b, Location loc, Operation *module,
                                Attribute mask, Value q, Value kv, Value seqQ,
                                Value seqKv) {
  IREmitter e{b, loc, module};
  TileBounds<Value> t{q, e.add(q, e.c(1)), kv, e.add(kv, e.c(1)), seqQ, seqKv};
  return attnc::mask::Classifier<IREmitter>(e).classify(toRule(mask), t).first;
}
