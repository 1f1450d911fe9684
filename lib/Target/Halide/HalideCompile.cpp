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
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <sstream>

using namespace Halide;
using namespace attnc::halide;

bool attnc::halide::lookupHalideTarget(const std::string &name, HalideTarget &target) {
  // The same instruction sets as the MLIR backend's targets of these names;
  // the GPU targets' host code (a few checks and the launch) is AVX2's.
  // No bounds-query mode: attnc's runtime always passes whole buffers, and without the query
  // path a kernel compiles 13% faster into a 13% smaller object (the Halide matrix, x86-64-avx2).
  const std::string avx2 = "x86-64-linux-sse41-avx-f16c-fma-avx2-no_bounds_query";
  // GPU pipelines take a user_context: attnc's runtime hands the CUDA stream
  // through it (lib/Runtime/HalideGrid.cpp). Halide 21's newest CUDA
  // capability is 8.6: cuda-sm90 is its PTX, which ptxas and the driver
  // assemble for sm_90 (Halide emits no Hopper instructions).
  const std::map<std::string, HalideTarget> targets = {
      {"x86-64-avx512", {avx2 + "-avx512-avx512_skylake", 16, false, 32}},
      {"x86-64-avx2", {avx2, 8}},
      {"cuda-sm80", {avx2 + "-cuda-cuda_capability_80-user_context", 8, true}},
      {"cuda-sm90", {avx2 + "-cuda-cuda_capability_86-user_context", 8, true}},
      {"opencl", {avx2 + "-opencl-user_context", 8, true}},
  };
  auto it = targets.find(name);
  if (it == targets.end())
    return false;
  target = it->second;
  return true;
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

/// Halide's errors as exceptions (as its default reporter throws them), and its warnings on
/// stderr but for the one every f16 / bf16 kernel would print: x86 has no (b)float16
/// arithmetic, and attnc computes in f32 on purpose (only loads and stores convert).
class Reporter : public CompileTimeErrorReporter {
  void warning(const char *message) override {
    if (!std::strstr(message, "float16 type operation is emulated"))
      std::fputs(message, stderr);
  }
  [[noreturn]] void error(const char *message) override { throw CompileError(message); }
};

void installReporter() {
  static Reporter reporter;
  static const bool installed = (set_custom_compile_time_error_reporter(&reporter), true);
  (void)installed;
}

/// Runs `body` on the scheduled pipeline; "" or the Halide error's text.
template <typename Body>
std::string withPipeline(const FlashProblem &problem, const HalideTarget &target,
                         const std::string &source, Body body) {
  return runHalide(source, [&] {
    FlashFuncs f;
    defineFlash(problem, target.gpu ? FlashShape::grid : FlashShape::item, f);
    Target t(target.halideTarget);
    if (target.gpu && source != "hand")
      throw CompileError("the GPU targets have only the hand schedule; the autoschedulers "
                         "attnc offers are CPU ones");
    if (t.has_feature(Target::OpenCL) && problem.dtype == ElemType::f16)
      throw CompileError("the opencl target has no f16 kernels: OpenCL's half type needs "
                         "cl_khr_fp16, which PoCL's CPU device lacks");
    if (target.gpu)
      scheduleFlashGpu(problem, f);
    else if (source == "hand")
      scheduleFlashCpu(problem, target.vectorWidth, target.vectorRegisters, f);
    else
      autoschedule(source, problem, f, t);
    body(f, t);
  });
}

} // namespace

std::string attnc::halide::runHalide(const std::string &source,
                                     const std::function<void()> &body) {
  installReporter();
  try {
    body();
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

void attnc::halide::requireCpuHandSchedule(const char *op, const HalideTarget &target,
                                           const std::string &source) {
  if (target.gpu)
    throw CompileError(std::string(op) + " is built by the Halide backend on CPU targets "
                       "only (x86-64-avx512, x86-64-avx2), not its GPU targets");
  if (source != "hand")
    throw CompileError(std::string(op) + " has the hand schedule only; the autoschedulers "
                       "are offered for attention kernels");
}

std::string attnc::halide::compileFlashObject(const FlashProblem &problem,
                                              const HalideTarget &target,
                                              const std::string &source,
                                              const std::string &path, bool withRuntime) {
  return withPipeline(problem, target, source, [&](FlashFuncs &f, const Target &t) {
    f.pipeline().compile_to_object(path, f.arguments(), problem.name + "_halide",
                                   withRuntime ? t : t.with_feature(Target::NoRuntime));
  });
}

std::string attnc::halide::compileRuntimeObject(const HalideTarget &target,
                                                const std::string &path) {
  installReporter();
  try {
    compile_standalone_runtime(path, Target(target.halideTarget));
    return "";
  } catch (const Halide::Error &e) {
    return std::string("Halide: ") + e.what();
  }
}

std::string attnc::halide::flashDeviceCode(const FlashProblem &problem,
                                           const HalideTarget &target, std::string &error) {
  std::string code;
  error = withPipeline(problem, target, "hand", [&](FlashFuncs &f, const Target &t) {
    if (!target.gpu)
      throw CompileError("a CPU target has no device code");
    // Lowering compiles the GPU loops and keeps their code in a buffer named
    // <api>_gpu_source_kernels, which the object embeds as it is.
    Module module = f.pipeline().compile_to_module(f.arguments(), problem.name + "_halide", t);
    for (const Buffer<> &buffer : module.buffers())
      if (buffer.name().find("gpu_source_kernels") != std::string::npos)
        code.assign(reinterpret_cast<const char *>(buffer.data()),
                    strnlen(reinterpret_cast<const char *>(buffer.data()),
                            buffer.size_in_bytes()));
    if (code.empty())
      throw CompileError("Halide's module holds no device code");
    code = "// attnc: kernel " + problem.name + ": " + f.gpuLaunch + "\n" + code;
  });
  return code;
}

std::string attnc::halide::lowerFlashStmt(const FlashProblem &problem,
                                          const HalideTarget &target,
                                          const std::string &source, std::string &error) {
  std::string stmt;
  error = withPipeline(problem, target, source, [&](FlashFuncs &f, const Target &t) {
    std::ostringstream os;
    os << f.pipeline().compile_to_module(f.arguments(), problem.name + "_halide", t);
    stmt = os.str();
  });
  return stmt;
}
