//===- halide-smoke.cpp - the Halide SDK works here -----------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// JIT-compiles a softmax-weighted row sum (the core of attention's P * V) for
// the host with AVX-512 forced on, runs it, compares it with a double-precision
// loop, and writes the pipeline's assembly to argv[1] so the test can check
// that zmm FMAs were generated. Exits non-zero when the error is too large.
// With --compile-only (a CPU without AVX-512) it writes the assembly and stops.
//
//===----------------------------------------------------------------------===//

#include "Halide.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace Halide;

namespace {
constexpr int kRows = 64, kCols = 256;
// f32 sums of 256 positive terms against a double reference: ~256 ulp worst case.
constexpr double kTolerance = 1e-5;

Func buildPipeline(ImageParam scores, ImageParam values) {
  Var row("row");
  RDom k(0, kCols, "k");
  Func rowMax("rowMax"), weight("weight"), out("out");
  Expr s = scores(k, row);
  rowMax(row) = maximum(s);
  Func num("num"), den("den");
  Expr e = exp(scores(k, row) - rowMax(row));
  num(row) += e * values(k);
  den(row) += e;
  out(row) = num(row) / den(row);
  // Schedule: rows 16 wide in zmm lanes; reductions stay in registers.
  out.vectorize(row, 16);
  rowMax.compute_at(out, row).vectorize(row);
  for (Func f : {num, den}) {
    f.compute_at(out, row).vectorize(row);
    f.update().vectorize(row);
  }
  return out;
}

double referenceRow(const std::vector<float> &s, const std::vector<float> &v,
                    int row) {
  double mx = -INFINITY, num = 0, den = 0;
  for (int k = 0; k < kCols; ++k)
    mx = std::max(mx, double(s[row * kCols + k]));
  for (int k = 0; k < kCols; ++k) {
    double e = std::exp(double(s[row * kCols + k]) - mx);
    num += e * v[k];
    den += e;
  }
  return num / den;
}
} // namespace

int main(int argc, char **argv) {
  bool compileOnly = argc == 3 && std::string(argv[1]) == "--compile-only";
  if (argc != 2 && !compileOnly) {
    std::fprintf(stderr, "usage: halide-smoke [--compile-only] ASM_OUT\n");
    return 2;
  }
  const char *asmPath = argv[argc - 1];
  // Compiled only (no AVX-512 here): the whole Skylake-server subset (F, CD, BW, DQ, VL),
  // what the run needs of a host; AVX512 alone (F and CD) on an AVX2 host's features trips
  // an assertion in LLVM's x86 lowering.
  Target target = get_host_target().with_feature(Target::AVX512);
  if (compileOnly)
    target = target.with_feature(Target::AVX512_Skylake);
  std::printf("target: %s\n", target.to_string().c_str());

  ImageParam scores(Float(32), 2, "scores"), values(Float(32), 1, "values");
  Func out = buildPipeline(scores, values);

  std::vector<float> s(kRows * kCols), v(kCols);
  for (int i = 0; i < kRows * kCols; ++i)
    s[i] = std::sin(0.37f * i);
  for (int k = 0; k < kCols; ++k)
    v[k] = 1.5f + std::cos(0.11f * k); // positive: no cancellation in num
  Buffer<float> sBuf(s.data(), kCols, kRows), vBuf(v.data(), kCols);
  scores.set(sBuf);
  values.set(vBuf);

  out.compile_to_assembly(asmPath, {scores, values}, "smoke", target);
  if (compileOnly) {
    std::printf("compiled only: assembly in %s, nothing run\n", asmPath);
    return 0;
  }
  Buffer<float> result = out.realize({kRows}, target);

  double worst = 0;
  for (int row = 0; row < kRows; ++row) {
    double ref = referenceRow(s, v, row);
    worst = std::max(worst, std::fabs(result(row) - ref) / std::max(1e-30, std::fabs(ref)));
  }
  bool ok = worst <= kTolerance;
  std::printf("rows: %d, max relative error: %.3g, tolerance %.0e: %s\n", kRows,
              worst, kTolerance, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
