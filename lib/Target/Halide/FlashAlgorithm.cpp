//===- FlashAlgorithm.cpp - attn.flash's recurrence in Halide -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One work item: query rows [q0, q0 + blockQ) of one (batch, head) (rows past
// the sequence repeat its last row and are discarded by the caller), against
// the KV tiles of width B = block_kv that the mask rules do not skip:
//
//   queries(d, i)     = q[q0 + i, d] * scale
//   score(i, j, t)    = sum_d queries(d, i) * k[tB + j, d]
//   masked(i, j, t)   = score_mod(score, b, h, q0 + i, tB + j), or kMasked
//                       where the mask or mask_mod drops (i, tB + j) (tiles the
//                       rules call full skip the element test)
//   tileMax(i, t)     = max_j masked;  prob = exp(masked - tileMax)
//   tileSum(i, t)     = sum_j prob;    probValues(d, i, t) = sum_j prob v[tB + j, d]
//   state(d, i) = (m, l, acc), one update per visited tile t:
//     m' = max(m, tileMax), l' = l e^(m - m') + tileSum e^(tileMax - m'),
//     acc' = acc e^(m - m') + probValues e^(tileMax - m')
//   out = acc / l (0 where l = 0), lse = m + log l (-inf where l = 0)
//
// P is taken against the tile's own max, since no Func can read another's
// update in progress; rescaling both terms by e^(. - m') makes that exact
// (HALIDE-FLASH-NOTES.md). Masked scores are a finite kMasked, not -inf:
// Halide compiles float arithmetic with fast-math flags that may assume no
// infinities; -inf is produced only as lse's bit pattern.
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"

#include "HalideMaskEmitter.h"
#include "ModTranslate.h"

using namespace Halide;
using namespace attnc::halide;

namespace {

constexpr float kMasked = -1e38f;
/// A tile row whose max is below this kept nothing.
constexpr float kNothingKept = -1e37f;

Type halideType(ElemType type) {
  switch (type) {
  case ElemType::f16:
    return Float(16);
  case ElemType::bf16:
    return BFloat(16);
  case ElemType::f32:
    break;
  }
  return Float(32);
}

Expr i64(Expr x) { return cast<int64_t>(x); }

} // namespace

std::vector<Argument> FlashFuncs::arguments() const {
  return {q, k, v, batch, head, q0, seqQ, seqKv};
}

void attnc::halide::defineFlash(const FlashProblem &p, FlashFuncs &f) {
  Type type = halideType(p.dtype);
  f.q = ImageParam(type, 2, "q");
  f.k = ImageParam(type, 2, "k");
  f.v = ImageParam(type, 2, "v");
  const int D = static_cast<int>(p.dim), B = static_cast<int>(p.blockKv);
  const int rowsMax = static_cast<int>(p.blockQ);
  Var d = f.d, i = f.i, j = f.j, t = f.t;
  Expr rows = f.q.dim(1).extent(), lastKey = f.seqKv - 1;

  f.queries(d, i) = cast<float>(f.q(d, min(i, rows - 1))) * static_cast<float>(p.scale);
  f.keys(d, j) = cast<float>(f.k(d, clamp(j, 0, lastKey)));
  f.valuesInPlace(d, j) = cast<float>(f.v(d, j));

  // The shared tile rules, on this item's rectangle and on single elements.
  Expr q0 = i64(f.q0), q1 = q0 + i64(rows), seqQ = i64(f.seqQ), seqKv = i64(f.seqKv);
  HalideMaskEmitter tiles{p.blockQ, p.blockKv}, elements;
  mask::Classifier<HalideMaskEmitter> byTile(tiles), byElement(elements);
  // (full, empty) of KV tile `tile`, inline where used (no Func: nothing for a
  // schedule, or an autoscheduler, to place). An edge tile holds keys past
  // seq_kv; a mask_mod can drop any element.
  auto tileClass = [&](Expr tile) {
    Expr k0 = i64(tile) * B, k1 = min(k0 + B, seqKv);
    auto [full, empty] = byTile.classify(p.mask, {q0, q1, k0, k1, seqQ, seqKv});
    return std::pair{full && k0 + B <= seqKv && !p.maskMod, empty};
  };
  Expr qPos = q0 + i64(i), kPos = i64(t) * B + i64(j);
  Expr keep = byElement.classify(p.mask, {qPos, qPos + 1, kPos, kPos + 1, seqQ, seqKv}).first;
  Expr b = i64(f.batch), h = i64(f.head);
  if (p.maskMod)
    keep = keep && translateMod(*p.maskMod, {b, h, qPos, kPos});

  f.rd = RDom(0, D, "rd");
  f.score(i, j, t) = 0.0f;
  f.score(i, j, t) += f.queries(f.rd, i) * f.keys(f.rd, t * B + j);
  Expr score = f.score(i, j, t);
  if (p.scoreMod)
    score = cast<float>(translateMod(*p.scoreMod, {score, b, h, qPos, kPos}));
  f.masked(i, j, t) = select(tileClass(t).first || (keep && kPos < seqKv), score, kMasked);

  f.rj = RDom(0, B, "rj");
  f.tileMax(i, t) = kMasked;
  f.tileMax(i, t) = max(f.tileMax(i, t), f.masked(i, f.rj, t));
  Expr tileMax = f.tileMax(i, t);
  f.prob(i, j, t) = select(tileMax < kNothingKept, 0.0f, exp(f.masked(i, j, t) - tileMax));
  f.tileSum(i, t) = 0.0f;
  f.tileSum(i, t) += f.prob(i, f.rj, t);
  // The keys of the tile that exist: Halide trims the loop to them, so P V
  // reads v in place without clamping each key (P is 0 past seq_kv anyway).
  // Bounds inference does not use the predicate; the promise gives it the
  // range the trimmed loop keeps to.
  f.rv = RDom(0, B, "rv");
  f.rv.where(t * B + f.rv < f.seqKv);
  Expr key = unsafe_promise_clamped(t * B + f.rv, 0, lastKey);
  f.probValues(d, i, t) = 0.0f;
  f.probValues(d, i, t) += f.prob(i, f.rv, t) * f.valuesInPlace(d, key);

  // Only the tiles of the mask's key range are visited, and of those only the
  // ones the rules do not call empty.
  auto [lo, hi] = byTile.keyRange(p.mask, {q0, q1, Expr(int64_t(0)), seqKv, seqQ, seqKv});
  Expr firstTile = cast<int32_t>(max(lo, Expr(int64_t(0))) / B);
  Expr endTile = cast<int32_t>((clamp(hi, Expr(int64_t(0)), seqKv) + (B - 1)) / B);
  // The update runs over (head_dim lane, tile) with the lane an RVar, so that
  // it may read lane D - 1 of m and l: written last within each tile, it still
  // holds the previous tile's values for every other lane. The rescale
  // factors then depend on (i, tile) only and are computed once per row, not
  // once per lane (HALIDE-FLASH-NOTES.md); m and l are meaningful at D - 1.
  f.rt = RDom(0, D, firstTile, max(endTile - firstTile, 0), "rt");
  f.rt.where(!tileClass(f.rt.y).second);
  RVar lane = f.rt.x;
  Expr tile = f.rt.y;
  f.state(d, i) = Tuple(kMasked, 0.0f, 0.0f);
  Expr m = f.state(D - 1, i)[0], l = f.state(D - 1, i)[1], acc = f.state(lane, i)[2];
  Expr tileMaxAt = f.tileMax(i, tile), mNext = max(m, tileMaxAt);
  // One of the two factors is 1: a single exp.
  Expr shrink = exp(-abs(m - tileMaxAt)), grew = tileMaxAt > m;
  Expr keepOld = select(grew, shrink, 1.0f), keepTile = select(grew, 1.0f, shrink);
  f.state(lane, i) = Tuple(mNext, l * keepOld + f.tileSum(i, tile) * keepTile,
                           acc * keepOld + f.probValues(lane, i, tile) * keepTile);

  Expr lOut = f.state(D - 1, i)[1], accOut = f.state(d, i)[2];
  f.out(d, i) = cast(type, select(lOut > 0.0f, accOut / lOut, 0.0f));
  Expr l0 = f.state(D - 1, i)[1], m0 = f.state(D - 1, i)[0];
  Expr bits = select(l0 > 0.0f, reinterpret<uint32_t>(m0 + log(l0)), Internal::make_const(UInt(32), uint64_t(0xff800000u)));
  f.lse(i) = reinterpret<float>(bits);

  for (ImageParam *in : {&f.q, &f.k, &f.v}) {
    in->dim(0).set_bounds(0, D).set_stride(1);
    in->dim(1).set_min(0);
  }
  f.out.output_buffer().dim(0).set_bounds(0, D).set_stride(1);
  f.out.output_buffer().dim(1).set_bounds(0, rowsMax);
  f.lse.output_buffer().dim(0).set_bounds(0, rowsMax);
}
