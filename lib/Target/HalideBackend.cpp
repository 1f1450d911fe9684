//===- HalideBackend.cpp - the Halide backend's kernels -------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// From the tiled form: each kernel's Halide pipeline (lib/Target/Halide) and
// the tile functions calling them (the MLIR pipeline with
// attn-lower-flash-to-halide-call), merged into one object with the Halide
// runtime object the build wrote, when there is one.
//
//===----------------------------------------------------------------------===//

#include "Backends.h"
#include "Emit.h"

#include "attnc/Conversion/AttnToHalide/FlashProblemFromOp.h"
#include "attnc/Conversion/AttnToHalide/LinearProblemFromOp.h"
#include "attnc/Conversion/AttnToHalide/ProjectionProblemFromOp.h"
#include "attnc/Target/Halide/FlashPipeline.h"
#include "attnc/Target/Halide/LinearPipeline.h"
#include "attnc/Target/Halide/ProjectionPipeline.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::emit;

/// The Halide backend's input: each kernel of the tiled form as plain data,
/// by kernel family.
struct HalideProblems {
  std::vector<halide::FlashProblem> flash;
  std::vector<halide::ProjectionProblem> projections;
  std::vector<halide::LinearProblem> linear;
};

/// The lowered statement of a CPU-only family's kernel (`--emit=halide`).
static std::string cpuFamilyStmt(const halide::ProjectionProblem &problem,
                                 const halide::HalideTarget &target, const std::string &source,
                                 std::string &message) {
  return halide::lowerProjectionStmt(problem, target, source, message);
}
static std::string cpuFamilyStmt(const halide::LinearProblem &problem,
                                 const halide::HalideTarget &target, const std::string &source,
                                 std::string &message) {
  return halide::lowerLinearStmt(problem, target, source, message);
}

static llvm::Expected<HalideProblems> halideProblems(ModuleOp module,
                                                     const Selection &selection) {
  OwningOpRef<ModuleOp> tiled = module.clone();
  if (llvm::Error err = runPipeline(*tiled, selection, PipelineStage::tiled))
    return std::move(err);
  HalideProblems problems;
  for (attn::KernelOp kernel : tiled->getOps<attn::KernelOp>()) {
    Operation *compute = kernel.getCompute();
    if (auto projection = dyn_cast_or_null<attn::ProjectionOp>(compute)) {
      auto problem = attn::projectionProblemFromOp(projection, selection.targetName());
      if (failed(problem))
        return alreadyReported(); // it said why, at the spec's line
      problems.projections.push_back(std::move(*problem));
      continue;
    }
    if (auto linear = dyn_cast_or_null<attn::LinearAttentionOp>(compute)) {
      auto problem = attn::linearProblemFromOp(linear, selection.targetName());
      if (failed(problem))
        return alreadyReported();
      problems.linear.push_back(std::move(*problem));
      continue;
    }
    FailureOr<halide::FlashProblem> problem = attn::flashProblemFromOp(
        kernel, selection.targetName());
    if (failed(problem))
      return alreadyReported(); // flashProblemFromOp said why, at the spec's line
    // The CPU hand schedule's unroll; the GPU schedules have none (0).
    problem->unroll =
        selection.schedule.declares("unroll") ? selection.schedule.get("unroll") : 0;
    problems.flash.push_back(std::move(*problem));
  }
  return problems;
}

/// The Halide runtime object of `target` under `installPrefix`, or "" when
/// there is none (then each Halide kernel object carries its own).
static std::string shippedHalideRuntime(llvm::StringRef target, llvm::StringRef installPrefix) {
  llvm::SmallString<256> path(installPrefix);
  llvm::sys::path::append(path, ATTNC_HALIDE_RUNTIME_DIR, target + ".o");
  return llvm::sys::fs::exists(path) ? path.str().str() : "";
}

void attnc::printHalideRuntimes(llvm::StringRef installPrefix, llvm::raw_ostream &os) {
  std::string runtime = shippedHalideRuntime(halide::kHalideCpuTargets[0], installPrefix);
  if (!runtime.empty())
    os << "halide runtime objects: " << llvm::sys::path::parent_path(runtime)
       << " (merged into each --backend=halide object)\n";
  else
    os << "halide runtime objects: none next to this attnc (" << ATTNC_HALIDE_RUNTIME_DIR
       << "); each --backend=halide kernel carries its own\n";
}

llvm::Error attnc::writeHalideRuntimes(llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create " + dir + ": " + ec.message());
  for (auto names : {llvm::ArrayRef(halide::kHalideCpuTargets),
                     llvm::ArrayRef(halide::kHalideGpuTargets)})
    for (llvm::StringRef name : names) {
      halide::HalideTarget target;
      if (!halide::lookupHalideTarget(name.str(), target))
        return error("the Halide backend has no target " + name);
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, name + ".o");
      std::string message = halide::compileRuntimeObject(target, path.str().str());
      if (!message.empty())
        return error("the Halide runtime for " + name + ": " + message);
    }
  return llvm::Error::success();
}

/// The tile functions (the LLVM-dialect `module`) and each problem's Halide
/// pipeline as objects in temporary files, merged into `objPath` with the
/// shipped `runtime` object when there is one ("": each pipeline carries its own).
static llvm::Error writeHalideObject(ModuleOp module, const Selection &selection,
                                     const HalideProblems &problems,
                                     const halide::HalideTarget &target,
                                     const std::string &source, llvm::StringRef objPath,
                                     const std::string &runtime) {
  ObjectParts parts;
  llvm::Expected<std::string> path = parts.add();
  if (!path)
    return path.takeError();
  if (llvm::Error err = writeObjectFile(module, selection.cpu, *path))
    return err;
  if (!runtime.empty())
    parts.addKept(runtime);
  // Each kernel's object: `compile` is compileFlashObject, compileProjectionObject or
  // compileLinearObject.
  auto addEach = [&](const auto &list, auto compile) -> llvm::Error {
    for (const auto &problem : list) {
      llvm::Expected<std::string> part = parts.add();
      if (!part)
        return part.takeError();
      std::string message = compile(problem, target, source, *part, runtime.empty());
      if (!message.empty())
        return error("kernel '" + problem.name + "': " + message);
    }
    return llvm::Error::success();
  };
  if (llvm::Error err = addEach(problems.flash, halide::compileFlashObject))
    return err;
  if (llvm::Error err = addEach(problems.projections, halide::compileProjectionObject))
    return err;
  if (llvm::Error err = addEach(problems.linear, halide::compileLinearObject))
    return err;
  return parts.merge(objPath, selection.cpu.triple);
}

llvm::Error HalideBackend::emit(ModuleOp module, const Selection &selection, EmitStage stage,
                                const CompileOutput &output) const {
  if (stage == EmitStage::spec || stage == EmitStage::normalized || stage == EmitStage::tiled)
    return printMlirStage(module, selection, stage, output);
  if (stage == EmitStage::loops || stage == EmitStage::llvm || stage == EmitStage::assembly)
    return error("--backend=halide has no --emit=loops / llvm / asm stage; its pipeline "
                 "is printed by --emit=halide");
  auto problems = halideProblems(module, selection);
  if (!problems)
    return problems.takeError();
  halide::HalideTarget target;
  const std::string &name = selection.targetName();
  if (!halide::lookupHalideTarget(name, target))
    return error("the Halide backend has no target " + name);
  std::string source = selection.schedule.getChoice("source").str();
  // A text stage: each attention kernel's text from `print`, which sets its
  // message on failure (and the CPU-only families' from `printCpu`).
  auto writeEachKernel = [&](auto print, auto printCpu) -> llvm::Error {
    std::string text;
    auto append = [&](const auto &list, auto printOne) -> llvm::Error {
      for (const auto &problem : list) {
        std::string message;
        text += printOne(problem, message);
        if (!message.empty())
          return error("kernel '" + problem.name + "': " + message);
      }
      return llvm::Error::success();
    };
    if (llvm::Error err = append(problems->flash, print))
      return err;
    if (llvm::Error err = append(problems->projections, printCpu))
      return err;
    if (llvm::Error err = append(problems->linear, printCpu))
      return err;
    return writeText(output.path, [&](auto &os) { os << text; });
  };
  if (stage == EmitStage::ptx) {
    if (!llvm::StringRef(name).starts_with("cuda"))
      return error("--emit=ptx needs a CUDA target (cuda-sm80, cuda-sm90)");
    return produce(output, [&] {
      return writeEachKernel(
          [&](const auto &problem, std::string &message) {
            return halide::flashDeviceCode(problem, target, message);
          },
          [](const auto &, std::string &) { return std::string(); }); // CPU only: refused

    });
  }
  if (stage == EmitStage::halide)
    return writeEachKernel(
        [&](const auto &problem, std::string &message) {
          return halide::lowerFlashStmt(problem, target, source, message) + "\n";
        },
        [&](const auto &problem, std::string &message) {
          return cpuFamilyStmt(problem, target, source, message) + "\n";
        });
  OwningOpRef<ModuleOp> spec = module.clone();
  if (llvm::Error err = runPipeline(module, selection, PipelineStage::llvmDialect))
    return err;
  std::string runtime = shippedHalideRuntime(name, output.installPrefix);
  if (output.noteInput)
    output.noteInput("halide runtime", runtime);
  return writeOutputs(
      [&](llvm::StringRef objPath) {
        return writeHalideObject(module, selection, *problems, target, source, objPath,
                                 runtime);
      },
      *spec, selection, stage, output);
}
