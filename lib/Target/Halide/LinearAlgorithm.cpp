//===- LinearAlgorithm.cpp - attn.linear_attention as Halide pipelines ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The two pipelines of a linear attention kernel (LinearPipeline.h):
//
//   state:  phi_k(d, j) = phi(k(d, j))
//           s(e, d) = s_in(e, d) + sum_j phi_k(d, j) v(e, j)
//           z(d)    = z_in(d) + sum_j phi_k(d, j)
//   rows:   phi_q(d, i) = scale phi(q(d, i))
//           a(j, i)     = j <= i ? sum_d phi_q(d, i) phi_k(d, j) : 0    (causal)
//           numer(e, i) = sum_d phi_q(d, i) s(e, d) [+ sum_j a(j, i) v(e, j)]
//           zc(d, i)    = z(d) [+ sum_{j <= i} phi_k(d, j)]        (a scan)
//           denom(i)    = eps + sum_d phi_q(d, i) zc(d, i)
//           out(e, i)   = numer(e, i) / denom(i)   (or numer alone, unnormalized)
//
// scheduled as register-blocked products like the projection pipeline:
// s in blocks of (a few head_dim rows) x (value_dim vectors) over the keys,
// numer in blocks of kRowBlock rows x (value_dim vectors) over head_dim and
// then the chunk's keys. The adapter gives the rows pipeline at least
// kRowBlock output rows (scratch for a shorter item): rows past q's view
// are read clamped to its last one.
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"

#include "attnc/Target/Halide/LinearPipeline.h"

#include <sstream>

using namespace Halide;
using namespace attnc::halide;

namespace {

constexpr int kRowBlock = static_cast<int>(kLinearBlockRows);

Expr featureMap(FeatureMapKind map, Expr x) {
  switch (map) {
  case FeatureMapKind::identity:
    return x;
  case FeatureMapKind::elu1:
    return select(x > 0.0f, x + 1.0f, exp(x));
  case FeatureMapKind::relu:
    return max(x, 0.0f);
  }
  return x;
}

/// The widest power of two up to `most` lanes that divides `extent`.
int lanesFor(int64_t extent, int most) {
  int lanes = 1;
  while (lanes * 2 <= most && extent % (lanes * 2) == 0)
    lanes *= 2;
  return lanes;
}

/// How a value_dim axis is vectorised: `lanes` per vector and `vectors` per
/// register block (dividing value_dim / lanes, at most `most`), so blocks
/// tile it exactly.
struct ValueBlock {
  int lanes = 1, vectors = 1;
  int width() const { return lanes * vectors; }
};

ValueBlock valueBlock(int64_t valueDim, int targetLanes, int most) {
  ValueBlock b;
  b.lanes = lanesFor(valueDim, targetLanes);
  for (int n = most; n > 1; --n)
    if ((valueDim / b.lanes) % n == 0) {
      b.vectors = n;
      break;
    }
  return b;
}

struct LinearFuncs {
  ImageParam q, k, v, sIn, zIn;
  Var d{"d"}, e{"e"}, i{"i"}, j{"j"};
  RDom rd, rj, rk; // head_dim; the keys of the call; those up to row i (causal)
  Func phiQ{"phi_q"}, phiK{"phi_k"}, phiKRows{"phi_k_rows"}, scores{"a"}, scoresAcc{"a_acc"};
  Func acc{"acc"}, zc{"zc"}, denom{"denom"}, out{"out"}; // acc: numer, or the state's sum
  Func s{"s"}, z{"z"};
};

void declareInputs(const LinearProblem &p, LinearFuncs &f) {
  Type type = halideType(p.dtype);
  f.q = ImageParam(type, 2, "q");
  f.k = ImageParam(type, 2, "k");
  f.v = ImageParam(type, 2, "v");
  f.sIn = ImageParam(Float(32), 2, "s");
  f.zIn = ImageParam(Float(32), 1, "z");
  const int hd = static_cast<int>(p.headDim), vd = static_cast<int>(p.valueDim);
  f.q.dim(0).set_bounds(0, hd).dim(1).set_min(0);
  f.k.dim(0).set_bounds(0, hd).dim(1).set_min(0);
  f.v.dim(0).set_bounds(0, vd).dim(1).set_min(0);
  f.sIn.dim(0).set_bounds(0, vd).dim(1).set_bounds(0, hd);
  f.zIn.dim(0).set_bounds(0, hd);
  f.rd = RDom(0, hd, "rd");
  f.rj = RDom(0, f.k.dim(1).extent(), "rj");
  // Keys past the view read clamped: the rows pipeline's a(j, i) is computed
  // in whole vectors of keys, and those past the chunk are never used.
  Expr key = clamp(f.j, 0, f.k.dim(1).extent() - 1);
  f.phiK(f.d, f.j) = featureMap(p.featureMap, cast<float>(f.k(f.d, key)));
}

void defineState(const LinearProblem &p, LinearFuncs &f) {
  f.acc(f.e, f.d) = f.sIn(f.e, f.d);
  f.acc(f.e, f.d) += f.phiK(f.d, f.rj) * cast<float>(f.v(f.e, f.rj));
  f.s(f.e, f.d) = f.acc(f.e, f.d);
  f.z(f.d) = f.zIn(f.d);
  f.z(f.d) += f.phiK(f.d, f.rj);
  f.s.output_buffer().dim(0).set_bounds(0, static_cast<int>(p.valueDim));
  f.s.output_buffer().dim(1).set_bounds(0, static_cast<int>(p.headDim));
  f.z.output_buffer().dim(0).set_bounds(0, static_cast<int>(p.headDim));
}

void defineRows(const LinearProblem &p, LinearFuncs &f) {
  Expr row = clamp(f.i, 0, f.q.dim(1).extent() - 1);
  f.phiQ(f.d, f.i) =
      static_cast<float>(p.scale) * featureMap(p.featureMap, cast<float>(f.q(f.d, row)));
  f.acc(f.e, f.i) = 0.0f;
  f.acc(f.e, f.i) += f.phiQ(f.rd, f.i) * f.sIn(f.e, f.rd);
  if (!p.causal)
    f.zc(f.d, f.i) = f.zIn(f.d);
  if (p.causal) {
    // The chunk's own keys, j <= i: phi_k with the keys innermost, so a(., i)
    // is a sum of vectors along j.
    f.phiKRows(f.j, f.d) = f.phiK(f.d, f.j);
    f.scoresAcc(f.j, f.i) = 0.0f;
    f.scoresAcc(f.j, f.i) += f.phiQ(f.rd, f.i) * f.phiKRows(f.j, f.rd);
    f.scores(f.j, f.i) = f.scoresAcc(f.j, f.i);
    // Keys j <= i only: a row's loop stops at its own key.
    f.rk = RDom(0, f.k.dim(1).extent(), "rk");
    f.rk.where(f.rk <= f.i);
    f.acc(f.e, f.i) += f.scores(f.rk, f.i) * cast<float>(f.v(f.e, f.rk));
    // The normalizer's own keys as a running sum over the rows.
    RDom ri(1, f.k.dim(1).extent() - 1, "ri");
    f.zc(f.d, f.i) = f.zIn(f.d) + f.phiK(f.d, f.i);
    f.zc(f.d, ri) = f.zc(f.d, ri - 1) + f.phiK(f.d, ri);
  }
  f.denom(f.i) = static_cast<float>(p.eps);
  f.denom(f.i) += f.phiQ(f.rd, f.i) * f.zc(f.rd, f.i);
  Expr value = p.normalize ? f.acc(f.e, f.i) / f.denom(f.i) : f.acc(f.e, f.i);
  f.out(f.e, f.i) = cast(halideType(p.dtype), value);
  f.out.output_buffer().dim(0).set_bounds(0, static_cast<int>(p.valueDim)).dim(1).set_min(0);
}

/// `out`'s blocks of `rows` x vb.width(), `acc` in registers over its
/// updates' reductions (each update's reduction outermost).
/// An update's reduction, and whether it runs inside each row (its bounds
/// depend on the row) rather than outside the block's rows.
struct Reduction {
  RVar r;
  bool perRow = false;
};

void scheduleBlocks(Func out, Func acc, Var x, Var y, std::vector<Reduction> reductions,
                    int rows, ValueBlock vb, TailStrategy rowTail) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
  out.split(x, xo, xi, vb.width()).split(y, yo, yi, rows, rowTail).reorder(xi, yi, xo, yo)
      .vectorize(xi, vb.lanes).unroll(xi).unroll(yi);
  acc.compute_at(out, xo).store_in(MemoryType::Register).vectorize(x, vb.lanes).unroll(x)
      .unroll(y);
  for (int u = 0; u < acc.num_update_definitions(); ++u)
    (reductions[u].perRow ? acc.update(u).reorder(x, reductions[u].r, y)
                          : acc.update(u).reorder(x, y, reductions[u].r))
        .vectorize(x, vb.lanes)
        .unroll(x)
        .unroll(y);
}

/// The state pipeline: blocks of head_dim rows x value_dim vectors,
/// accumulated in registers over the keys.
void scheduleState(const LinearProblem &p, const HalideTarget &target, LinearFuncs &f) {
  const int budget = target.vectorRegisters >= 32 ? 24 : 12; // accumulators
  ValueBlock vb = valueBlock(p.valueDim, target.vectorWidth, target.vectorRegisters / 8);
  int rows = 1;
  for (int r : {6, 4, 3, 2})
    if (p.headDim % r == 0 && r * vb.vectors <= budget) {
      rows = r;
      break;
    }
  scheduleBlocks(f.s, f.acc, f.e, f.d, {{f.rj}}, rows, vb, TailStrategy::RoundUp);
  const int hdLanes = lanesFor(p.headDim, target.vectorWidth);
  f.phiK.compute_root().vectorize(f.d, hdLanes);
  f.z.vectorize(f.d, hdLanes);
  f.z.update().reorder(f.d, f.rj).vectorize(f.d, hdLanes);
}

/// The rows pipeline: blocks of kRowBlock rows x value_dim vectors.
void scheduleRows(const LinearProblem &p, const HalideTarget &target, LinearFuncs &f) {
  const int most = target.vectorRegisters >= 32 ? 4 : 3; // x kRowBlock accumulators
  ValueBlock vb = valueBlock(p.valueDim, target.vectorWidth, most);
  std::vector<Reduction> reductions{{f.rd}};
  if (p.causal)
    reductions.push_back({f.rk, /*perRow=*/true});
  scheduleBlocks(f.out, f.acc, f.e, f.i, reductions, kRowBlock, vb, TailStrategy::ShiftInwards);
  const int hdLanes = lanesFor(p.headDim, target.vectorWidth);
  f.phiQ.compute_root().vectorize(f.d, hdLanes);
  f.zc.compute_root().vectorize(f.d, hdLanes);
  for (int u = 0; u < f.zc.num_update_definitions(); ++u)
    f.zc.update(u).vectorize(f.d, hdLanes);
  // Each row's normalizer a dot product along head_dim, in vectors.
  f.denom.compute_root();
  f.denom.update().atomic().vectorize(f.rd, hdLanes);
  if (!p.causal)
    return;
  const int w = target.vectorWidth;
  f.phiK.compute_root().vectorize(f.d, hdLanes);
  f.phiKRows.compute_root().vectorize(f.j, w);
  // a in register blocks of kRowBlock rows x `most` vectors of keys, whole
  // vectors (rounded up past the chunk's keys).
  f.scores.compute_root();
  const int keyVectors = static_cast<int>(std::min<int64_t>(most, (p.rows + w - 1) / w));
  scheduleBlocks(f.scores, f.scoresAcc, f.j, f.i, {{f.rd}}, kRowBlock, ValueBlock{w, keyVectors},
                 TailStrategy::RoundUp);
}

/// Defines and schedules both pipelines, then runs `body` on their modules.
template <typename Body>
std::string withLinear(const LinearProblem &p, const HalideTarget &target,
                       const std::string &source, bool withRuntime, Body body) {
  return runHalide(source, [&] {
    requireCpuHandSchedule("attn.linear_attention", target, source);
    Target t(target.halideTarget);
    if (!withRuntime)
      t = t.with_feature(Target::NoRuntime);
    LinearFuncs state, rows;
    declareInputs(p, state);
    defineState(p, state);
    scheduleState(p, target, state);
    declareInputs(p, rows);
    defineRows(p, rows);
    scheduleRows(p, target, rows);
    std::vector<Argument> rowArgs{rows.q};
    if (p.causal)
      rowArgs.insert(rowArgs.end(), {rows.k, rows.v});
    rowArgs.insert(rowArgs.end(), {rows.sIn, rows.zIn});
    Module stateModule = Pipeline({state.s, state.z})
                             .compile_to_module({state.k, state.v, state.sIn, state.zIn},
                                                p.name + "_halide_state", t);
    Module rowsModule = Pipeline(rows.out).compile_to_module(rowArgs, p.name + "_halide", t);
    body(stateModule, rowsModule);
  });
}

} // namespace

std::string attnc::halide::compileLinearObject(const LinearProblem &problem,
                                               const HalideTarget &target,
                                               const std::string &source,
                                               const std::string &path, bool withRuntime) {
  return withLinear(problem, target, source, withRuntime, [&](Module &state, Module &rows) {
    link_modules(problem.name + "_halide", {state, rows})
        .compile({{OutputFileType::object, path}});
  });
}

std::string attnc::halide::lowerLinearStmt(const LinearProblem &problem,
                                           const HalideTarget &target,
                                           const std::string &source, std::string &error) {
  std::string stmt;
  error = withLinear(problem, target, source, true, [&](Module &state, Module &rows) {
    std::ostringstream os;
    os << state << rows;
    stmt = os.str();
  });
  return stmt;
}
