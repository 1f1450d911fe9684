//===- Registry.h - backends, targets and their pipelines -------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one place that maps (backend, target) to a pass pipeline. Everything
// above attn.flash is shared; below it each backend has its own passes,
// configured from its target description and its schedule (Tunables.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_REGISTRY_H
#define ATTNC_TARGET_REGISTRY_H

#include "attnc/Target/CPU/CpuTarget.h"
#include "attnc/Target/Tunables.h"
#include "attnc/Transforms/TileSizes.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <vector>

namespace attnc {

/// One row of `attnc --list-targets`.
struct TargetEntry {
  std::string name, backend, device, needs;
  bool runsHere;
};

/// Every known target of every backend.
std::vector<TargetEntry> listTargets();

/// The target attnc and attnc-tune compile for unless told otherwise.
inline constexpr const char *kDefaultTarget = "x86-64-avx512";

/// The backends --backend takes, the default first.
llvm::ArrayRef<llvm::StringRef> backendNames();
/// Backend names and what each runs on.
void printBackends(llvm::raw_ostream &os);
/// The tunables `--schedule` takes for a backend (mlir or halide).
llvm::ArrayRef<Tunable> tunablesOf(llvm::StringRef backend);

/// A (backend, target) pair with its schedule: all a pipeline needs.
struct Selection {
  std::string backend;
  CpuTarget cpu; // the host code's target (all of it, on a CPU target)
  Schedule schedule;
  /// A GPU target: of the Halide backend (cuda-sm80, cuda-sm90, opencl) or of
  /// the mlir backend (cuda-sm80); "" on a CPU target.
  std::string gpuTarget;
  /// Test instrumentation of the CPU lowering (count visited KV tiles).
  bool countTiles = false;
  /// Verify the IR after every pass (attnc --verify-each), not only after the
  /// last one of each pipeline run.
  bool verifyEachPass = false;
  /// Explicit tile sizes are multiples of this (`tileStepMeaning` says why;
  /// "": the CPU target's vector width).
  int64_t tileStep = 1;
  std::string tileStepMeaning;

  /// The target as --target names it: the GPU target, or the CPU one.
  const std::string &targetName() const { return gpuTarget.empty() ? cpu.name : gpuTarget; }
};

/// Looks up the backend and target and applies `name=value` schedule
/// assignments; errors name what would be valid.
llvm::Expected<Selection> select(llvm::StringRef backend, llvm::StringRef target,
                                 llvm::ArrayRef<std::string> schedule);

/// `attnc --list-tunables`: the tunables `select(backend, target, ...)` takes,
/// with that target's defaults and tile step; an unknown backend or target
/// is the error `select` gives.
llvm::Error printTargetTunables(llvm::StringRef backend, llvm::StringRef target,
                                llvm::raw_ostream &os);

/// Why `selection`'s schedule is not worth compiling for head_dim `headDim`
/// (a register block that must spill, a tile working set beyond the L2), as
/// "<reason>: <details>", or "" when it fits. attnc-tune prunes on it.
std::string scheduleMisfit(const Selection &selection, int64_t headDim);

/// `attnc explain`'s lines for a kernel's schedule on the selection's target:
/// the layout of its `workItems` (what `itemsOf` names: "batch x heads x
/// query tiles") and the tunables' values (ScheduleText.cpp). A `decode`
/// kernel's CUDA CTAs are mma.sync ones on every target.
void describeSchedule(const Selection &selection, int64_t blockQ, int64_t blockKv,
                      int64_t headDim, int64_t elemBytes, int64_t workItems,
                      llvm::StringRef itemsOf, llvm::raw_ostream &os, bool decode = false);

/// The block_q attn-tile-flash uses for a kernel of `headDim` (the schedule's,
/// or the automatic one of the selection's backend and target).
int64_t resolvedBlockQ(const Selection &selection, int64_t headDim);
/// The block_kv attn-tile-flash uses for a kernel of `elemBytes` elements.
int64_t resolvedBlockKv(const Selection &selection, int64_t elemBytes,
                        std::optional<mlir::attn::DecodeTile> decode = std::nullopt);

/// The chunk of causal linear attentions the selection's schedule sets (0:
/// the spec's), attn-normalize's linear-chunk.
int64_t scheduledLinearChunk(const Selection &selection);

/// The MLIR stages a pipeline can stop after. `lowered` is the MLIR CPU
/// backend's tile functions as attn-lower-flash-to-cpu writes them, before
/// the loops stage's clean-up (where SharedTiles compares them).
enum class PipelineStage { normalized, tiled, lowered, loops, llvmDialect };

/// Adds the passes from a spec up to and including `until`; with `from`, for
/// a module at that stage already (the MLIR CPU backend's lowered or loops
/// stage, to the LLVM dialect).
void buildPipeline(mlir::OpPassManager &pm, const Selection &selection,
                   PipelineStage until, std::optional<PipelineStage> from = std::nullopt);

/// Registers `attnc-pipeline` for attnc-opt: buildPipeline for the options'
/// backend, target, schedule and last stage (lib/Target/PipelineRegistration.cpp).
void registerAttncPipeline();

} // namespace attnc

#endif // ATTNC_TARGET_REGISTRY_H
