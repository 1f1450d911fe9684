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

#include <cctype>
#include <dlfcn.h>
#include <map>
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

/// Schedules `f` with one of Halide's autoschedulers. The estimates describe a
/// work item of a 4096-key sequence; the pipeline stays correct for any.
void autoschedule(const std::string &source, const FlashProblem &p, FlashFuncs &f,
                  const Target &target) {
  // The plugins sit next to libHalide.so in the wheel, which is where this
  // process loaded it from.
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&load_plugin), &info) || !info.dli_fname)
    throw CompileError("cannot locate libHalide.so to load the autoscheduler plugins");
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  std::string plugin = dir + "libautoschedule_" + source + ".so", name = source;
  name[0] = static_cast<char>(std::toupper(name[0])); // "Adams2019"
  load_plugin(plugin);
  const int D = static_cast<int>(p.dim), rows = static_cast<int>(p.blockQ), keys = 4096;
  f.q.set_estimates({{0, D}, {0, rows}});
  f.k.set_estimates({{0, D}, {0, keys}});
  f.v.set_estimates({{0, D}, {0, keys}});
  for (Param<int32_t> *zero : {&f.batch, &f.head, &f.q0})
    zero->set_estimate(0);
  f.seqQ.set_estimate(keys);
  f.seqKv.set_estimate(keys);
  f.out.set_estimates({{0, D}, {0, rows}});
  f.lse.set_estimates({{0, rows}});
  // Adams2019's default beam search took 42 s per kernel here; greedy takes a
  // few. None of them may add threads: the runtime owns those.
  std::map<std::string, std::string> params = {{"parallelism", "1"}};
  if (source == "adams2019")
    params["beam_size"] = "1";
  f.pipeline().apply_autoscheduler(target, {name, params});
}

/// Runs `body` on the scheduled pipeline; "" or the Halide error's text.
template <typename Body>
std::string withPipeline(const FlashProblem &problem, const HalideCpuTarget &target,
                         const std::string &source, Body body) {
  try {
    FlashFuncs f;
    defineFlash(problem, f);
    Target t(target.halideTarget);
    if (source == "hand")
      scheduleFlashCpu(problem, target.vectorWidth, f);
    else
      autoschedule(source, problem, f, t);
    body(f, t);
    return "";
  } catch (const Halide::Error &e) {
    std::string what = e.what();
    while (!what.empty() && std::isspace(static_cast<unsigned char>(what.back())))
      what.pop_back();
    if (what.empty() || what == "Error:")
      what = "an error without a message (an internal error of Halide)";
    return "Halide, schedule source '" + source + "': " + what;
  }
}

} // namespace

std::string attnc::halide::compileFlashObject(const FlashProblem &problem,
                                              const HalideCpuTarget &target,
                                              const std::string &source,
                                              const std::string &path) {
  return withPipeline(problem, target, source, [&](FlashFuncs &f, const Target &t) {
    f.pipeline().compile_to_object(path, f.arguments(), problem.name + "_halide", t);
  });
}

std::string attnc::halide::lowerFlashStmt(const FlashProblem &problem,
                                          const HalideCpuTarget &target,
                                          const std::string &source, std::string &error) {
  std::string stmt;
  error = withPipeline(problem, target, source, [&](FlashFuncs &f, const Target &t) {
    std::ostringstream os;
    os << f.pipeline().compile_to_module(f.arguments(), problem.name + "_halide", t);
    stmt = os.str();
  });
  return stmt;
}
