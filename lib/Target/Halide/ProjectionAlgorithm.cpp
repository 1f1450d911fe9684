//===- ProjectionAlgorithm.cpp - attn.projection as a Halide pipeline -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One work item of a projection kernel (ProjectionPipeline.h):
//
//   panel(c, k) = W^T[k, c0 + c]          the item's 64 weight columns, f32,
//                                         columns innermost (packed once)
//   prod(c, r)  = bias(c) + sum_k panel(c, k) * x(k, r)
//   y(c, r)     = prod(c, r) in the kernel's dtype
//
// scheduled as the MLIR CPU kernels' products are (ProjectionProduct.cpp):
// register blocks of 6 rows x 2 vectors (16 vector registers) or 6 x 4 (32)
// over all of K, the panel on the stack. Columns past the views' extents
// are read clamped (a short last tile's extra results go to the adapter's
// scratch), so the column loops have constant extents; the last row block
// shifts inwards over rows it computed before.
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"

#include "attnc/Interface/KernelInterface.h"
#include "attnc/Target/Halide/ProjectionPipeline.h"

#include <sstream>

using namespace Halide;
using namespace attnc::halide;

namespace {

constexpr int kCols = static_cast<int>(attnc::kProjectionTile);
constexpr int kBlockRows = static_cast<int>(kProjectionBlockRows);

struct ProjectionFuncs {
  ImageParam x, w, bias;
  Var c{"c"}, r{"r"}, k{"k"};
  RDom rk;
  Func panel{"panel"}, prod{"prod"}, y{"y"};

  std::vector<Argument> arguments() const { return {x, w, bias}; }
};

Expr clampTo(Expr i, const OutputImageParam &image, int dim) {
  return clamp(i, 0, image.dim(dim).extent() - 1);
}

void defineProjection(const ProjectionProblem &p, ProjectionFuncs &f) {
  Type type = halideType(p.dtype);
  const int in = static_cast<int>(p.in);
  f.x = ImageParam(type, 2, "x");
  f.w = ImageParam(type, 2, "w");
  f.bias = ImageParam(type, 1, "bias");
  f.rk = RDom(0, in, "rk");
  Expr column = clampTo(f.c, f.w, p.matmulWeights ? 0 : 1);
  Expr weight = p.matmulWeights ? f.w(column, f.k) : f.w(f.k, column);
  f.panel(f.c, f.k) = cast<float>(weight);
  f.prod(f.c, f.r) = cast<float>(f.bias(clampTo(f.c, f.bias, 0)));
  f.prod(f.c, f.r) += f.panel(f.c, f.rk) * cast<float>(f.x(f.rk, clampTo(f.r, f.x, 1)));
  f.y(f.c, f.r) = cast(type, f.prod(f.c, f.r));
  // The views' inner dims are dense (Halide's default): x's and nn.Linear
  // W's along K, MatMul W's along the columns, y's; the item is always whole.
  f.x.dim(0).set_bounds(0, in);
  f.bias.dim(0).set_stride(Expr()); // a bias view may be strided
  (p.matmulWeights ? f.w.dim(1) : f.w.dim(0)).set_bounds(0, in);
  f.y.output_buffer().dim(0).set_bounds(0, kCols).dim(1).set_min(0);
}

void scheduleProjectionCpu(const ProjectionProblem &p, const HalideTarget &target,
                           ProjectionFuncs &f) {
  const int w = target.vectorWidth;
  const int blockCols = (target.vectorRegisters >= 32 ? 4 : 2) * w;
  Var co("co"), ci("ci"), ro("ro"), ri("ri");
  // Row blocks outside, column blocks inside: a block's rows stay in L1 while
  // the panel's columns stream from L2, as in the MLIR kernels.
  f.y.split(f.c, co, ci, blockCols)
      .split(f.r, ro, ri, kBlockRows, TailStrategy::ShiftInwards)
      .reorder(ci, ri, co, ro)
      .vectorize(ci, w)
      .unroll(ci)
      .unroll(ri);
  f.prod.compute_at(f.y, co).store_in(MemoryType::Register).vectorize(f.c, w).unroll(f.c)
      .unroll(f.r);
  f.prod.update().reorder(f.c, f.r, f.rk).vectorize(f.c, w).unroll(f.c).unroll(f.r);
  // The panel's columns as vectors: a gather along nn.Linear's rows (an
  // 8 x 8 transpose through Halide's shuffles measured 3% slower on Zen 3).
  f.panel.compute_root().store_in(MemoryType::Stack).bound(f.c, 0, kCols)
      .bound(f.k, 0, static_cast<int>(p.in)).vectorize(f.c, w);
}

/// Defines and schedules the pipeline, then runs `body` on it.
template <typename Body>
std::string withProjection(const ProjectionProblem &problem, const HalideTarget &target,
                           const std::string &source, Body body) {
  return runHalide(source, [&] {
    requireCpuHandSchedule("attn.projection", target, source);
    ProjectionFuncs f;
    defineProjection(problem, f);
    scheduleProjectionCpu(problem, target, f);
    body(f, Target(target.halideTarget));
  });
}

} // namespace

std::string attnc::halide::compileProjectionObject(const ProjectionProblem &problem,
                                                   const HalideTarget &target,
                                                   const std::string &source,
                                                   const std::string &path, bool withRuntime) {
  return withProjection(problem, target, source, [&](ProjectionFuncs &f, const Target &t) {
    f.y.compile_to_object(path, f.arguments(), problem.name + "_halide",
                          withRuntime ? t : t.with_feature(Target::NoRuntime));
  });
}

std::string attnc::halide::lowerProjectionStmt(const ProjectionProblem &problem,
                                               const HalideTarget &target,
                                               const std::string &source, std::string &error) {
  std::string stmt;
  error = withProjection(problem, target, source, [&](ProjectionFuncs &f, const Target &t) {
    std::ostringstream os;
    os << Pipeline(f.y).compile_to_module(f.arguments(), problem.name + "_halide", t);
    stmt = os.str();
  });
  return stmt;
}
