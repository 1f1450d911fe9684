//===- Registry.cpp - backends, targets and their pipelines ---------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Backends: `mlir` (in-process MLIR -> LLVM, x86-64 targets) and `halide`
// (the Halide wheel's libHalide in process, x86-64 targets). Both start from
// attn.flash; the Halide backend's MLIR half is only the tile function that
// calls its pipeline (attn-lower-flash-to-halide-call), which the driver
// compiles with Halide (lib/Target/Halide) and links into the same object.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/Registry.h"

#include "attnc/Conversion/Pipelines.h"
#include "attnc/Target/CPU/CpuTunables.h"
#include "attnc/Target/Halide/FlashPipeline.h"
#include "attnc/Transforms/Passes.h"

using namespace attnc;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static constexpr llvm::StringLiteral kCpuTargets[] = {
    "x86-64-avx512", "x86-64-avx512-bf16", "x86-64-avx2", "host"};

/// The Halide backend takes the tile sizes (the CPU tunables of those names and
/// ranges; the hand schedule's register blocks are fixed for now) and the
/// schedule's source.
static llvm::ArrayRef<Tunable> halideTunables() {
  static const std::vector<llvm::StringRef> sources(std::begin(halide::kScheduleSources),
                                                    std::end(halide::kScheduleSources));
  static const Tunable tunables[] = {
      cpuTunables()[0], cpuTunables()[1],
      {"source", 0, 0, int64_t(sources.size()) - 1, false,
       "where the schedule comes from: the hand-written one, or a Halide autoscheduler", "",
       sources}};
  return tunables;
}

llvm::ArrayRef<Tunable> attnc::tunablesOf(llvm::StringRef backend) {
  return backend == "halide" ? halideTunables() : cpuTunables();
}

std::vector<TargetEntry> attnc::listTargets() {
  std::vector<TargetEntry> entries;
  for (llvm::StringRef name : kCpuTargets) {
    CpuTarget cpu = llvm::cantFail(lookupCpuTarget(name));
    entries.push_back({cpu.name, "mlir", "cpu (kDLCPU)", cpu.needs, cpu.runsHere()});
  }
  for (llvm::StringRef name : halide::kHalideCpuTargets) {
    CpuTarget cpu = llvm::cantFail(lookupCpuTarget(name));
    entries.push_back({cpu.name, "halide", "cpu (kDLCPU)", cpu.needs, cpu.runsHere()});
  }
  return entries;
}

void attnc::printBackends(llvm::raw_ostream &os) {
  os << "backends: mlir (in-process MLIR and LLVM); halide (in-process Halide 21, x86-64 "
        "targets)\n";
}

llvm::Expected<Selection> attnc::select(llvm::StringRef backend, llvm::StringRef target,
                                        llvm::ArrayRef<std::string> schedule) {
  if (backend == "halide") {
    if (!llvm::is_contained(halide::kHalideCpuTargets, target))
      return error("--backend=halide has no target '" + target +
                   "'; expected x86-64-avx512 or x86-64-avx2");
    Selection selection{backend.str(), llvm::cantFail(lookupCpuTarget(target)),
                        Schedule(halideTunables())};
    for (const std::string &assignment : schedule)
      if (llvm::Error err = selection.schedule.set(assignment, selection.cpu.vectorWidth))
        return std::move(err);
    return selection;
  }
  if (backend != "mlir")
    return error("unknown backend '" + backend + "'; expected mlir or halide");
  llvm::Expected<CpuTarget> cpu = lookupCpuTarget(target);
  if (!cpu)
    return cpu.takeError();
  Selection selection{backend.str(), *cpu, Schedule(cpuTunables())};
  for (const std::string &assignment : schedule)
    if (llvm::Error err = selection.schedule.set(assignment, cpu->vectorWidth))
      return std::move(err);
  return selection;
}

void attnc::buildPipeline(mlir::OpPassManager &pm, const Selection &s,
                          PipelineStage until) {
  pm.addPass(mlir::attn::createAttnNormalizePass());
  if (until == PipelineStage::normalized)
    return;
  mlir::attn::AttnTileFlashPassOptions tiling;
  tiling.blockQ = s.schedule.get("block_q");
  tiling.blockKv = s.schedule.get("block_kv");
  pm.addPass(mlir::attn::createAttnTileFlashPass(tiling));
  if (until == PipelineStage::tiled)
    return;
  if (s.backend == "halide") {
    pm.addPass(mlir::attn::createAttnLowerFlashToHalideCallPass());
    buildLowerToLLVMPipeline(pm);
    return;
  }
  mlir::attn::AttnLowerFlashToCPUPassOptions lowering;
  lowering.target = s.cpu.name;
  lowering.qkKeys = s.schedule.get("qk_keys");
  lowering.qkRowVectors = s.schedule.get("qk_row_vectors");
  lowering.pvRows = s.schedule.get("pv_rows");
  lowering.pvVectors = s.schedule.get("pv_vectors");
  lowering.countTiles = s.countTiles;
  pm.addPass(mlir::attn::createAttnLowerFlashToCPUPass(lowering));
  buildPrepareLoopsPipeline(pm);
  if (until == PipelineStage::loops)
    return;
  buildLowerToLLVMPipeline(pm);
}
