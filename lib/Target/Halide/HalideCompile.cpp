//===- HalideCompile.cpp - the Halide backend's targets and outputs -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// FlashPipeline.h's entry points: the attnc target -> Halide target table,
// and the object / lowered statement of a problem. Halide reports errors by
// throwing Halide::Error (the wheel is built with exceptions); they stop here
// and come back as messages, so nothing above sees a Halide type.
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"

#include <sstream>

using namespace Halide;
using namespace attnc::halide;

bool attnc::halide::lookupHalideCpuTarget(const std::string &name, HalideCpuTarget &target) {
  // The same instruction sets as the MLIR backend's targets of these names.
  if (name == "x86-64-avx512") {
    target = {"x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake", 16};
    return true;
  }
  if (name == "x86-64-avx2") {
    target = {"x86-64-linux-sse41-avx-f16c-fma-avx2", 8};
    return true;
  }
  return false;
}

namespace {

/// Runs `body` on the scheduled pipeline; "" or the Halide error's text.
template <typename Body>
std::string withPipeline(const FlashProblem &problem, const HalideCpuTarget &target, Body body) {
  try {
    FlashFuncs f;
    defineFlash(problem, f);
    scheduleFlashCpu(problem, target.vectorWidth, f);
    body(f, Target(target.halideTarget));
    return "";
  } catch (const Halide::Error &e) {
    return std::string("Halide: ") + e.what();
  }
}

} // namespace

std::string attnc::halide::compileFlashObject(const FlashProblem &problem,
                                              const HalideCpuTarget &target,
                                              const std::string &path) {
  return withPipeline(problem, target, [&](FlashFuncs &f, const Target &t) {
    f.pipeline().compile_to_object(path, f.arguments(), problem.name + "_halide", t);
  });
}

std::string attnc::halide::lowerFlashStmt(const FlashProblem &problem,
                                          const HalideCpuTarget &target, std::string &error) {
  std::string stmt;
  error = withPipeline(problem, target, [&](FlashFuncs &f, const Target &t) {
    std::ostringstream os;
    os << f.pipeline().compile_to_module(f.arguments(), problem.name + "_halide", t);
    stmt = os.str();
  });
  return stmt;
}
