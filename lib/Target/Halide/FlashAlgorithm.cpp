//===- FlashAlgorithm.cpp - attn.flash's recurrence in Halide -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One work item: query rows [q0, q0 + blockQ) of one (batch, head) (rows past
// the sequence repeat its last row and are discarded by the caller), against
// the KV tiles of width B = block_kv that the mask rules do not skip. (A grid
// pipeline states the same for every row i of every (head, batch), with q0
// the start of row i's query tile.)
//
//   queries(d, i)     = q[q0 + i, d] * scale
//   score(i, j, t)    = sum_d queries(d, i) * k[tB + j, d]
//   masked(i, j, t)   = score_mod(score, b, h, q0 + i, tB + j), or kMasked
//                       where the mask or mask_mod drops (i, tB + j) (tiles the
//                       rules call full skip the element test)
//   tileMax(i, t)     = max_j masked;  prob = exp(masked - tileMax)
//   tileSum(i, t)     = sum_j prob;    probValues(d, i, t) = sum_j prob v[tB + j, d]
//   state: (m, l, acc) per row, one update per visited tile t:
//     m' = max(m, tileMax), l' = l e^(m - m') + tileSum e^(tileMax - m'),
//     acc' = acc e^(m - m') + probValues e^(tileMax - m')
//   out = acc / l (0 where l = 0), lse = m + log l (-inf where l = 0)
//
// On the CPU (item pipelines) exp is 2^x on scores in units of log2(e)
// unless a score_mod needs natural ones (exp2NonPositive below).
//
// Every visited tile is classified by the shared rules on its (query tile,
// KV tile) rectangle: empty ones are not computed, full ones skip the element
// test.
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
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Support/Exp2Polynomial.h"

using namespace Halide;
using namespace attnc::halide;

namespace {

constexpr float kMasked = -1e38f;
/// A tile row whose max is below this kept nothing.
constexpr float kNothingKept = -1e37f;

/// bf16 in a grid pipeline is stored as its bits: Halide 21's PTX backend
/// fails an LLVM assertion on bfloat casts, and its OpenCL backend takes
/// bfloat for half, which PoCL's CPU device lacks. The conversions are then
/// spelled out below (as the CPU's vcvtneps2bf16 rounds: to nearest even).
bool bf16AsBits(const FlashProblem &p, FlashShape shape) {
  return shape == FlashShape::grid && p.dtype == ElemType::bf16;
}

Expr bitsToFloat(Expr bits) { return reinterpret<float>(cast<uint32_t>(bits) << 16); }

Expr floatToBits(Expr x) {
  Expr bits = reinterpret<uint32_t>(x);
  Expr rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
  return cast<uint16_t>(select(is_nan(x), 0x7fc0, rounded));
}

Expr i64(Expr x) { return cast<int64_t>(x); }

/// 2^t for t <= 0, as the MLIR CPU kernels compute it (ExpNonPositive.cpp,
/// the same polynomial): n = round(t) as the truncation of t - 1/2 (t - 1/2
/// is negative, so truncating rounds it up: one vcvttps2dq, where Halide's
/// floor and round take two 256-bit vroundps on AVX-512), f = t - n in
/// (-1/2, 1/2], 2^n from the exponent bits. The clamp at -127 makes the
/// exponent field 0 there, so the result is exactly 0; 2^0 is exactly 1.
/// About 12 instructions per vector against Halide exp's 25, which guards
/// both ends and takes log2(e) itself.
Expr exp2NonPositive(Expr t) {
  t = max(t, -127.0f);
  Expr n = cast<int32_t>(t - 0.5f);
  Expr f = t - cast<float>(n), p = attnc::exp2poly::kF32[0];
  for (size_t c = 1; c < std::size(attnc::exp2poly::kF32); ++c)
    p = p * f + attnc::exp2poly::kF32[c];
  return p * reinterpret<float>((n + 127) << 23);
}

} // namespace

std::vector<Argument> FlashFuncs::arguments() const {
  std::vector<Argument> args{q, k, v};
  if (shape != FlashShape::grid)
    args.insert(args.end(), {batch, head, q0, seqQ, seqKv});
  args.insert(args.end(), inputs.begin(), inputs.end());
  return args;
}

namespace {

/// The arguments of every Func: its own, then (head, batch) in a grid.
struct Args {
  std::vector<Var> item;
  std::vector<Var> operator()(std::vector<Var> own) const {
    own.insert(own.end(), item.begin(), item.end());
    return own;
  }
  std::vector<Expr> at(std::vector<Expr> own) const {
    own.insert(own.end(), item.begin(), item.end());
    return own;
  }
};

/// The per-item facts the two shapes spell differently.
struct Item {
  Expr q0, q1;           // the query tile's rows [q0, q1), i64
  Expr qPos;             // row i's position, i64
  Expr batch, head;      // for the mods, i64
  Expr seqQ, seqKv;      // i32
  Expr rowOf;            // q's row for Func row i (clamped to the tensor)
};

Item itemFacts(const FlashProblem &p, const FlashFuncs &f) {
  if (f.shape == FlashShape::grid) {
    Expr seqQ = f.q.dim(1).extent(), seqKv = f.k.dim(1).extent();
    Expr blockQ = Expr(p.blockQ), q0 = i64(f.i / int(p.blockQ)) * blockQ;
    return {q0, min(q0 + blockQ, i64(seqQ)), i64(f.i), i64(f.batchVar), i64(f.headVar),
            seqQ, seqKv, min(f.i, seqQ - 1)};
  }
  Expr q0 = i64(f.q0), rows = f.q.dim(1).extent();
  return {q0, q0 + i64(rows), q0 + i64(f.i), i64(f.batch), i64(f.head),
          f.seqQ, f.seqKv, min(f.i, rows - 1)};
}

/// q (at this item's head), k or v (at its kv head) at (d, row), as f32.
Expr load(const FlashProblem &p, const FlashFuncs &f, const ImageParam &in, Expr d, Expr row) {
  if (f.shape == FlashShape::item)
    return cast<float>(in(d, row));
  Expr head = in.name() == "q" ? Expr(f.headVar) : f.headVar / int(p.group);
  Expr x = in(d, row, head, f.batchVar);
  return bf16AsBits(p, f.shape) ? bitsToFloat(x) : cast<float>(x);
}

/// Mod input `in` at `indices` (in the spec's order, i64), every index
/// clamped into the input so nothing outside it is read; and whether they
/// were all inside.
std::pair<Expr, Expr> clampedLoad(const ImageParam &in, const std::vector<Expr> &indices) {
  const int rank = static_cast<int>(indices.size());
  Expr inside = Internal::const_true();
  std::vector<Expr> coords(static_cast<size_t>(rank));
  for (int n = 0; n < rank; ++n) {
    Expr extent = in.dim(rank - 1 - n).extent(); // Halide's dims: innermost first
    Expr index = indices[size_t(n)];
    inside = inside && index >= Expr(int64_t(0)) && index < i64(extent);
    // In i64 first (any index), then in i32, the bounds Halide infers from.
    Expr narrow = cast<int32_t>(clamp(index, Expr(int64_t(0)), i64(extent) - 1));
    coords[size_t(rank - 1 - n)] = clamp(narrow, 0, extent - 1);
  }
  return {in(coords), inside};
}

/// The input named `name` of `p` and its ImageParam in `f`.
size_t inputIndex(const FlashProblem &p, const std::string &name) {
  for (size_t n = 0; n < p.inputs.size(); ++n)
    if (p.inputs[n].name == name)
      return n;
  throw CompileError("mod body: attn.load of an undeclared input @" + name);
}

/// Grid pipelines only (GPU kernels hold no assertions): per row (i, head,
/// batch), the argument of an input that a mod loads outside of at an
/// element of the row the mask attribute keeps, else 0. A second output,
/// O(seq_q) in size; the grid adapter turns it into the call's index error.
void defineIndexFailure(const FlashProblem &p, FlashFuncs &f, const Item &it,
                        attnc::mask::Classifier<HalideMaskEmitter> &byElement) {
  f.rk = RDom(0, it.seqKv, "rk");
  Expr kPos = i64(f.rk.x), failure = 0;
  ModLoadFn record = [&](const std::string &name, const std::vector<Expr> &indices, Type) {
    size_t n = inputIndex(p, name);
    auto [value, inside] = clampedLoad(f.inputs[n], indices);
    failure = max(failure, select(inside, 0, p.inputs[n].arg));
    return value;
  };
  if (p.maskMod)
    translateMod(*p.maskMod, {it.batch, it.head, it.qPos, kPos}, record);
  if (p.scoreMod)
    translateMod(*p.scoreMod, {Expr(0.0f), it.batch, it.head, it.qPos, kPos}, record);
  Expr seqQ = i64(it.seqQ), seqKv = i64(it.seqKv);
  // kPos < seqKv holds; it names rk in the update even where nothing else does.
  Expr kept = kPos < seqKv &&
              byElement.classify(p.mask, {it.qPos, it.qPos + 1, kPos, kPos + 1, seqQ, seqKv}).first;
  Var i = f.i, head = f.headVar, batch = f.batchVar;
  f.indexFailure(i, head, batch) = 0;
  f.indexFailure(i, head, batch) =
      max(f.indexFailure(i, head, batch), select(kept, failure, 0));
  OutputImageParam failures = f.indexFailure.output_buffer();
  for (int n = 0; n < 3; ++n)
    failures.dim(n).set_min(0);
}

} // namespace

void attnc::halide::defineFlash(const FlashProblem &p, FlashShape shape, FlashFuncs &f) {
  f.shape = shape;
  const bool grid = shape == FlashShape::grid;
  const int rank = grid ? 4 : 2;
  Type type = bf16AsBits(p, shape) ? UInt(16) : halideType(p.dtype);
  f.q = ImageParam(type, rank, "q");
  f.k = ImageParam(type, rank, "k");
  f.v = ImageParam(type, rank, "v");
  const int D = static_cast<int>(p.dim), B = static_cast<int>(p.blockKv);
  Var d = f.d, i = f.i, j = f.j, t = f.t;
  Args args;
  if (grid)
    args.item = {f.headVar, f.batchVar};
  Item it = itemFacts(p, f);
  Expr lastKey = it.seqKv - 1;
  f.inputs.clear();
  for (const ModInputDecl &in : p.inputs) {
    f.inputs.emplace_back(in.isInt ? Int(32) : Float(32), in.rank, "input_" + in.name);
    for (int n = 0; n < in.rank; ++n)
      f.inputs.back().dim(n).set_min(0);
  }

  // The CPU softmax exponentiates with 2^x: without a score_mod (which must
  // see natural scores), log2(e) is folded into the query scale, one
  // multiply per score fewer, and lse is converted back at the end.
  const bool log2Scores = !grid && !p.scoreMod;
  const double unit = log2Scores ? M_LOG2E : 1.0;
  auto expOf = [&](Expr x) { // x <= 0, in score units
    return grid ? exp(x) : exp2NonPositive(log2Scores ? x : x * float(M_LOG2E));
  };
  f.queries(args({d, i})) = load(p, f, f.q, d, it.rowOf) * static_cast<float>(p.scale * unit);
  f.keys(args({d, j})) = load(p, f, f.k, d, clamp(j, 0, lastKey));
  f.valuesInPlace(args({d, j})) = load(p, f, f.v, d, j);

  // The shared tile rules, on this item's rectangle and on single elements.
  Expr seqQ = i64(it.seqQ), seqKv = i64(it.seqKv);
  HalideMaskEmitter tiles{p.blockQ, p.blockKv}, elements;
  mask::Classifier<HalideMaskEmitter> byTile(tiles), byElement(elements);
  // (full, empty) of KV tile `tile`, inline where used (no Func: nothing for a
  // schedule, or an autoscheduler, to place). An edge tile holds keys past
  // seq_kv; a mask_mod can drop any element.
  auto tileClass = [&](Expr tile) {
    Expr k0 = i64(tile) * B, k1 = min(k0 + B, seqKv);
    auto [full, empty] = byTile.classify(p.mask, {it.q0, it.q1, k0, k1, seqQ, seqKv});
    return std::pair{full && k0 + B <= seqKv && !p.maskMod, empty};
  };
  Expr kPos = i64(t) * B + i64(j);
  // The mods' loads: checked where the element exists (rows past seq_q and
  // keys past seq_kv of an edge tile are computed and discarded).
  Expr evaluated = it.qPos < seqQ && kPos < seqKv;
  // An item pipeline fails at a load outside its input (ATTNC_HALIDE_INDEX_FAILURE
  // and the input's argument: the tile function reports it as an MLIR kernel
  // does); a grid pipeline clamps, and its index-failure output reports.
  ModLoadFn loadInput = [&](const std::string &name, const std::vector<Expr> &indices, Type) {
    size_t n = inputIndex(p, name);
    auto [value, inside] = clampedLoad(f.inputs[n], indices);
    if (grid)
      return value;
    return require(inside || !evaluated, value, ATTNC_HALIDE_INDEX_FAILURE, p.inputs[n].arg);
  };
  Expr keep =
      byElement.classify(p.mask, {it.qPos, it.qPos + 1, kPos, kPos + 1, seqQ, seqKv}).first;
  if (p.maskMod)
    keep = keep && translateMod(*p.maskMod, {it.batch, it.head, it.qPos, kPos}, loadInput);

  f.rd = RDom(0, D, "rd");
  f.score(args({i, j, t})) = 0.0f;
  f.score(args({i, j, t})) +=
      f.queries(args.at({f.rd, i})) * f.keys(args.at({f.rd, t * B + j}));
  Expr score = f.score(args({i, j, t}));
  if (p.scoreMod)
    score = cast<float>(
        translateMod(*p.scoreMod, {score, it.batch, it.head, it.qPos, kPos}, loadInput));
  // Keys past seq_kv (an edge tile's) are masked in a grid pipeline; an item
  // pipeline's row reductions stop at seq_kv instead (a loop bound, no select
  // per element: dense scores go straight to the tile).
  Expr inKv = grid ? kPos < seqKv : Internal::const_true();
  f.masked(args({i, j, t})) = select(tileClass(t).first || (keep && inKv), score, kMasked);

  f.rj = RDom(0, B, "rj");
  if (!grid)
    f.rj.where(t * B + f.rj < it.seqKv);
  f.tileMax(args({i, t})) = kMasked;
  f.tileMax(args({i, t})) = max(f.tileMax(args({i, t})), f.masked(args.at({i, f.rj, t})));
  Expr tileMax = f.tileMax(args({i, t}));
  f.prob(args({i, j, t})) =
      select(tileMax < kNothingKept, 0.0f, expOf(f.masked(args({i, j, t})) - tileMax));
  f.tileSum(args({i, t})) = 0.0f;
  f.tileSum(args({i, t})) += f.prob(args.at({i, f.rj, t}));
  // The keys of the tile that exist: Halide trims the loop to them, so P V
  // reads v in place without clamping each key (P is 0 past seq_kv anyway).
  // Bounds inference does not use the predicate; the promise gives it the
  // range the trimmed loop keeps to.
  f.rv = RDom(0, B, "rv");
  f.rv.where(t * B + f.rv < it.seqKv);
  Expr key = unsafe_promise_clamped(t * B + f.rv, 0, lastKey);
  f.probValues(args({d, i, t})) = 0.0f;
  f.probValues(args({d, i, t})) += f.prob(args.at({i, f.rv, t})) * f.valuesInPlace(args.at({d, key}));

  // Only the tiles of the mask's key range are visited, and of those only the
  // ones the rules do not call empty.
  auto [lo, hi] = byTile.keyRange(p.mask, {it.q0, it.q1, Expr(int64_t(0)), seqKv, seqQ, seqKv});
  Expr firstTile = cast<int32_t>(max(lo, Expr(int64_t(0))) / B);
  Expr endTile = cast<int32_t>((clamp(hi, Expr(int64_t(0)), seqKv) + (B - 1)) / B);
  // The rescale of the old state and of the tile's terms to m' = max(m,
  // tileMax): one of the two factors is 1, so a single exp.
  struct Rescale {
    Expr mNext, keepOld, keepTile;
  };
  auto rescale = [&](Expr m, Expr tile) {
    Expr tileMaxAt = f.tileMax(args.at({i, tile}));
    Expr shrink = expOf(-abs(m - tileMaxAt)), grew = tileMaxAt > m;
    return Rescale{max(m, tileMaxAt), select(grew, shrink, 1.0f), select(grew, 1.0f, shrink)};
  };
  Expr mOut, lOut, accOut; // the final state, as the output stages read it
  if (grid) {
    // (m, l, acc) per (lane, row). A reduction domain cannot depend on the
    // row, so every tile is in the domain and the predicate keeps the row's
    // range. Each lane keeps its own copy of m and l (the same in every
    // lane): lanes are GPU threads, and none may read another's while it is
    // being written.
    f.state(args({d, i})) = Tuple(kMasked, 0.0f, 0.0f);
    f.rt = RDom(0, (it.seqKv + (B - 1)) / B, "rt");
    Expr tile = f.rt.x;
    f.rt.where(tile >= firstTile && tile < endTile && !tileClass(tile).second);
    Expr m = f.state(args({d, i}))[0], l = f.state(args({d, i}))[1];
    Expr acc = f.state(args({d, i}))[2];
    Rescale r = rescale(m, tile);
    f.state(args({d, i})) =
        Tuple(r.mNext, l * r.keepOld + f.tileSum(args.at({i, tile})) * r.keepTile,
              acc * r.keepOld + f.probValues(args.at({d, i, tile})) * r.keepTile);
    mOut = m;
    lOut = l;
    accOut = acc;
  } else {
    // One float per (lane, row): acc in lanes [0, D), l in lane D, m in lane
    // D + 1, so m and l are stored once per row (as Tuple elements they took
    // a store per lane each). The update runs over (lane, tile) with the lane
    // an RVar, lanes in order: every acc lane reads m and l before lanes D
    // and D + 1 are written. The rescale factors then depend on (i, tile)
    // only and are computed once per row (per vector of rows on the CPU).
    const int lLane = D, mLane = D + 1;
    f.state(d, i) = select(d == mLane, kMasked, 0.0f);
    f.rt = RDom(0, D + 2, firstTile, max(endTile - firstTile, 0), "rt");
    f.rt.where(!tileClass(f.rt.y).second);
    Expr lane = f.rt.x, tile = f.rt.y;
    Expr m = f.state(mLane, i), l = f.state(lLane, i);
    Rescale r = rescale(m, tile);
    Expr accNext = f.state(lane, i) * r.keepOld +
                   f.probValues(min(lane, D - 1), i, tile) * r.keepTile;
    Expr lNext = l * r.keepOld + f.tileSum(i, tile) * r.keepTile;
    f.state(lane, i) = select(lane < D, accNext, lane == lLane, lNext, r.mNext);
    mOut = m;
    lOut = l;
    accOut = f.state(d, i);
  }
  Expr outF32 = select(lOut > 0.0f, accOut / lOut, 0.0f);
  Expr outValue = bf16AsBits(p, shape) ? floatToBits(outF32) : cast(type, outF32);
  Expr bits = select(lOut > 0.0f, reinterpret<uint32_t>(mOut * float(1.0 / unit) + log(lOut)),
                     Internal::make_const(UInt(32), uint64_t(0xff800000u)));
  Expr lseValue = reinterpret<float>(bits);
  if (!grid) {
    f.out(d, i) = outValue;
    f.lse(i) = lseValue;
  } else if (p.lse) {
    // One output Func with both: a GPU block computes its state once for
    // both. Every lane stores its row's lse; the lse buffer's d dimension
    // has stride 0 (HalideGrid.cpp), so they land on one element.
    f.out(args({d, i})) = Tuple(outValue, lseValue);
  } else {
    f.out(args({d, i})) = outValue;
  }
  for (ImageParam *in : {&f.q, &f.k, &f.v}) {
    in->dim(0).set_bounds(0, D).set_stride(1);
    for (int n = 1; n < rank; ++n)
      in->dim(n).set_min(0);
  }
  OutputImageParam out = f.out.output_buffers()[0];
  out.dim(0).set_bounds(0, D).set_stride(1);
  for (int n = 1; n < rank; ++n)
    out.dim(n).set_min(0);
  if (grid && p.lse)
    f.out.output_buffers()[1].dim(0).set_stride(0); // one lse per row
  if (grid && !p.inputs.empty())
    defineIndexFailure(p, f, it, byElement);
  if (!grid) {
    OutputImageParam lse = f.lse.output_buffer();
    out.dim(1).set_extent(static_cast<int>(p.blockQ));
    lse.dim(0).set_bounds(0, static_cast<int>(p.blockQ));
  }
}

Type attnc::halide::halideType(ElemType type) {
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
