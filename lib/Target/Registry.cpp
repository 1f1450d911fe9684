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
#include "attnc/Target/CUDA/CudaTarget.h"
#include "attnc/Target/Halide/FlashPipeline.h"
#include "attnc/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace attnc;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static constexpr llvm::StringLiteral kCpuTargets[] = {
    "x86-64-avx512", "x86-64-avx512-bf16", "x86-64-avx2", "x86-64", "aarch64-neon",
    "aarch64-sve256", "aarch64-sve512", "host"};

/// `cpuTunables()`'s entry `name`, for a table of another backend or target.
static Tunable cpuTunable(llvm::StringRef name) {
  return *llvm::find_if(cpuTunables(), [&](const Tunable &t) { return t.name == name; });
}

/// A copy of `t` with its own automatic value and meaning, where given.
static Tunable retold(Tunable t, llvm::StringRef automatic, llvm::StringRef meaning = "") {
  if (!automatic.empty())
    t.automatic = automatic;
  if (!meaning.empty())
    t.meaning = meaning;
  return t;
}

/// The tunable that picks where the Halide schedule comes from.
static Tunable halideSource() {
  static const std::vector<llvm::StringRef> sources(std::begin(halide::kScheduleSources),
                                                    std::end(halide::kScheduleSources));
  return {"source", 0, 0, int64_t(sources.size()) - 1, false,
          "where the schedule comes from: the hand-written one, or a Halide autoscheduler", "",
          sources};
}

/// The Halide backend on a CPU: the CPU tile sizes (its hand schedule's
/// register blocks are fixed), the unroll of that schedule, and its source;
/// a causal linear attention's chunk.
static llvm::ArrayRef<Tunable> halideCpuTunables() {
  static const Tunable tunables[] = {
      cpuTunable("block_q"), cpuTunable("block_kv"),
      retold(cpuTunable("unroll"), /*automatic=*/"",
             "steps of the Q K^T (head_dim) and P V (keys) loops per loop iteration (the "
             "CPU hand schedule)"),
      halideSource(), linearChunkTunable()};
  return tunables;
}

/// The Halide backend on a GPU (cuda-*, opencl): a tile is a block whose
/// softmax state sits in shared memory (attn-tile-flash's gpu rule).
static llvm::ArrayRef<Tunable> halideGpuTunables() {
  static const Tunable tunables[] = {
      retold(cpuTunable("block_q"), "16, or 8 for head_dim > 128",
             "query rows per tile = per GPU block (attn.flash block_q)"),
      cpuTunable("block_kv"), halideSource()};
  return tunables;
}

/// The mlir backend's CUDA kernels: tile sizes only (the warp layout follows
/// from them), block_kv chosen by dtype unless set (attn-tile-flash's
/// tensor-core rule).
static llvm::ArrayRef<Tunable> cudaTunables() {
  static const Tunable tunables[] = {
      retold(cpuTunable("block_q"), "64, or 32 for head_dim > 128",
             "query rows per tile = per CTA (attn.flash block_q)"),
      [] {
        Tunable t = retold(cpuTunable("block_kv"),
                           "64, or 32 for f32 (TF32: its scores and P take twice the "
                           "registers)");
        t.defaultValue = 0;
        return t;
      }()};
  return tunables;
}

llvm::ArrayRef<Tunable> attnc::tunablesOf(llvm::StringRef backend) {
  return backend == "halide" ? halideCpuTunables() : cpuTunables();
}

llvm::ArrayRef<llvm::StringRef> attnc::backendNames() {
  static const llvm::StringRef names[] = {"mlir", "halide"};
  return names;
}

std::vector<TargetEntry> attnc::listTargets() {
  std::vector<TargetEntry> entries;
  for (llvm::StringRef name : kCpuTargets) {
    CpuTarget cpu = llvm::cantFail(lookupCpuTarget(name));
    entries.push_back({cpu.name, "mlir", "cpu (kDLCPU)", cpu.needs, cpu.runsHere()});
  }
  // Whether a driver is installed, without loading one into this process.
  bool nvidia = llvm::sys::fs::exists("/proc/driver/nvidia");
  for (const CudaTarget &cuda : mlirCudaTargets())
    entries.push_back({cuda.name.str(), "mlir", "cuda (kDLCUDA)", cuda.needs.str(), nvidia});
  for (llvm::StringRef name : halide::kHalideCpuTargets) {
    CpuTarget cpu = llvm::cantFail(lookupCpuTarget(name));
    entries.push_back({cpu.name, "halide", "cpu (kDLCPU)", cpu.needs, cpu.runsHere()});
  }
  bool icd = llvm::sys::fs::is_directory("/etc/OpenCL/vendors");
  entries.push_back({"cuda-sm80", "halide", "cuda (kDLCUDA)",
                     "an NVIDIA GPU, sm_80 or newer, and its driver", nvidia});
  entries.push_back({"cuda-sm90", "halide", "cuda (kDLCUDA)",
                     "an NVIDIA GPU, sm_90 or newer, and its driver", nvidia});
  entries.push_back({"opencl", "halide", "opencl (kDLCPU)",
                     "an OpenCL 1.2 device (PoCL); host tensors; f32, bf16", icd});
  return entries;
}

void attnc::printBackends(llvm::raw_ostream &os) {
  os << "backends: mlir (in-process MLIR and LLVM; x86-64, AArch64 and CUDA targets); "
        "halide (in-process Halide 21, x86-64, CUDA and OpenCL targets)\n";
}

/// The Halide backend's GPU KV tiles unless --schedule sets them: 32 keys,
/// whose state, scores and keys fit in shared memory with the automatic
/// block_q (attn-tile-flash's gpu rule), the values too up to head_dim 64
/// (FlashScheduleGpu.cpp).
static llvm::Error setGpuDefaults(Selection &selection) {
  for (const char *assignment : {"block_kv=32"})
    if (llvm::Error err = selection.schedule.set(assignment, selection.cpu.vectorWidth))
      return err;
  return llvm::Error::success();
}

/// `selection` with the --schedule assignments applied; tile sizes step by
/// `step` (the vector width on a CPU, the MMA's k = 16 on the CUDA targets).
static llvm::Expected<Selection> withSchedule(Selection selection,
                                              llvm::ArrayRef<std::string> schedule,
                                              int64_t step, llvm::StringRef meaning = "") {
  selection.tileStep = step;
  selection.tileStepMeaning = meaning.str();
  for (const std::string &assignment : schedule)
    if (llvm::Error err = selection.schedule.set(assignment, step, meaning))
      return std::move(err);
  return selection;
}

llvm::Error attnc::printTargetTunables(llvm::StringRef backend, llvm::StringRef target,
                                       llvm::raw_ostream &os) {
  llvm::Expected<Selection> selection = select(backend, target, {});
  if (!selection)
    return selection.takeError();
  os << "tunables of the " << backend << " backend for " << target
     << " (--schedule name=value):\n";
  printTunables(selection->schedule, selection->tileStep, selection->tileStepMeaning, os);
  return llvm::Error::success();
}

llvm::Expected<Selection> attnc::select(llvm::StringRef backend, llvm::StringRef target,
                                        llvm::ArrayRef<std::string> schedule) {
  if (backend == "halide") {
    bool gpu = llvm::is_contained(halide::kHalideGpuTargets, target);
    if (!gpu && !llvm::is_contained(halide::kHalideCpuTargets, target))
      return error("--backend=halide has no target '" + target +
                   "'; expected x86-64-avx512, x86-64-avx2, cuda-sm80, cuda-sm90 or opencl" +
                   (llvm::is_contained(kCpuTargets, target) || lookupMlirCudaTarget(target)
                        ? " (" + target.str() + " is a target of --backend=mlir)"
                        : std::string()));
    // A GPU target's host code (argument checks, the launch) is AVX2's.
    Selection selection{backend.str(),
                        llvm::cantFail(lookupCpuTarget(gpu ? "x86-64-avx2" : target)),
                        Schedule(gpu ? halideGpuTunables() : halideCpuTunables())};
    if (gpu) {
      selection.gpuTarget = target.str();
      if (llvm::Error err = setGpuDefaults(selection))
        return std::move(err);
    }
    int64_t width = selection.cpu.vectorWidth;
    std::string meaning =
        gpu ? llvm::formatv("{0} (the f32 lanes of the host code's AVX2)", width).str() : "";
    return withSchedule(std::move(selection), schedule, width, meaning);
  }
  if (backend != "mlir")
    return error("unknown backend '" + backend + "'; expected mlir or halide");
  if (const CudaTarget *cuda = lookupMlirCudaTarget(target)) {
    // The host side (argument checks, the launch) is baseline x86-64 code.
    Selection selection{backend.str(), llvm::cantFail(lookupCpuTarget("x86-64")),
                        Schedule(cudaTunables())};
    selection.gpuTarget = cuda->name.str();
    int64_t step = cuda->mmaK;
    if (cuda->defaultBlockQ)
      if (llvm::Error err = selection.schedule.set(
              "block_q=" + std::to_string(cuda->defaultBlockQ), step))
        return std::move(err);
    return withSchedule(std::move(selection), schedule, step,
                        llvm::formatv("{0} (the k of the tensor-core MMA)", step).str());
  }
  llvm::Expected<CpuTarget> cpu = lookupCpuTarget(target);
  if (!cpu) {
    llvm::consumeError(cpu.takeError());
    std::string names = llvm::join(llvm::ArrayRef(kCpuTargets), ", ");
    for (const CudaTarget &cuda : mlirCudaTargets())
      names += ", " + cuda.name.str();
    bool halideOnly = llvm::is_contained(halide::kHalideGpuTargets, target);
    return error("unknown target '" + target + "'; expected one of " + names +
                 (halideOnly ? " (" + target.str() + " is a target of --backend=halide)"
                             : std::string()));
  }
  return withSchedule({backend.str(), *cpu, Schedule(cpuTunables())}, schedule,
                      cpu->vectorWidth);
}

/// The CPU kernels' automatic block_q is a whole number of both register
/// blocks' query rows (Q K^T: row vectors x lanes; P V: rows), so that no
/// tile runs a smaller block than the target's. The Halide CPU schedule takes
/// the same blocks (FlashScheduleCpu.cpp).
static int64_t blockQMultiple(const Selection &s) {
  if (!s.gpuTarget.empty())
    return 1;
  int64_t rowVectors = s.cpu.qkRowVectors(), pvRows = s.cpu.pvRows();
  if (s.backend == "mlir") { // the blocks are tunables there
    rowVectors = s.schedule.getOr("qk_row_vectors", rowVectors);
    pvRows = s.schedule.getOr("pv_rows", pvRows);
  }
  return std::lcm(rowVectors * s.cpu.vectorWidth, pvRows);
}

/// How attn-tile-flash sizes what the schedule leaves automatic on this
/// target. The Halide GPU schedule keeps its softmax state in shared memory:
/// fewer query rows. The mlir backend's CUDA kernels take half the keys in
/// f32 (TF32 scores and P take twice the registers of 16-bit ones).
static mlir::attn::TileRule tileRule(const Selection &s) {
  mlir::attn::TileRule rule;
  if (s.backend == "halide" && !s.gpuTarget.empty()) {
    rule.blockQ = 16;
    rule.blockQLargeHead = 8;
  }
  if (s.backend == "mlir" && lookupMlirCudaTarget(s.gpuTarget))
    rule.blockKvF32 = mlir::attn::kDefaultBlockKv / 2;

  if (s.backend == "mlir" && s.gpuTarget.empty()) {
    // The decode kernel's widened f16 K and V tiles in half of a 48-64 KiB
    // L1 (64 keys at head_dim 128 spilled to L2: 21-36% slower on a Xeon).
    rule.decodeWidenedBytes = 32 * 1024;
  }
  rule.blockQMultiple = blockQMultiple(s);
  return rule;
}

int64_t attnc::resolvedBlockQ(const Selection &s, int64_t headDim) {
  return mlir::attn::resolveBlockQ(s.schedule.get("block_q"), headDim, tileRule(s));
}

int64_t attnc::resolvedBlockKv(const Selection &s, int64_t elemBytes,
                               std::optional<mlir::attn::DecodeTile> decode) {
  return mlir::attn::resolveBlockKv(s.schedule.get("block_kv"), elemBytes, tileRule(s), decode);
}

int64_t attnc::scheduledLinearChunk(const Selection &s) {
  return s.schedule.declares("chunk") ? s.schedule.get("chunk") : 0;
}

void attnc::buildPipeline(mlir::OpPassManager &pm, const Selection &s,
                          PipelineStage until, std::optional<PipelineStage> from) {
  if (from) {
    // Only the MLIR CPU backend resumes, from its lowered or loops stage.
    assert(*from >= PipelineStage::lowered && until == PipelineStage::llvmDialect);
    if (*from == PipelineStage::lowered)
      buildPrepareLoopsPipeline(pm);
    buildLowerToLLVMPipeline(pm, s.cpu.name, s.cpu.cpuNeeds);
    return;
  }
  mlir::attn::AttnNormalizePassOptions normalize;
  normalize.linearChunk = scheduledLinearChunk(s);
  pm.addPass(mlir::attn::createAttnNormalizePass(normalize));
  if (until == PipelineStage::normalized)
    return;
  mlir::attn::TileRule rule = tileRule(s);
  mlir::attn::AttnTileFlashPassOptions tiling;
  tiling.blockQ = s.schedule.get("block_q");
  tiling.blockKv = s.schedule.get("block_kv");
  tiling.autoBlockQ = rule.blockQ;
  tiling.autoBlockQLargeHead = rule.blockQLargeHead;
  tiling.blockQMultiple = rule.blockQMultiple;
  tiling.autoBlockKv = rule.blockKv;
  tiling.autoBlockKvF32 = rule.blockKvF32;
  tiling.autoDecodeWidenedBytes = rule.decodeWidenedBytes;
  pm.addPass(mlir::attn::createAttnTileFlashPass(tiling));
  if (until == PipelineStage::tiled)
    return;
  if (s.backend == "halide") {
    mlir::attn::AttnLowerFlashToHalideCallPassOptions call;
    call.device = s.gpuTarget.empty()                          ? "cpu"
                  : llvm::StringRef(s.gpuTarget).starts_with("cuda") ? "cuda"
                                                               : "opencl";
    pm.addPass(mlir::attn::createAttnLowerFlashToHalideCallPass(call));
    buildLowerToLLVMPipeline(pm, s.cpu.name, s.cpu.cpuNeeds);
    return;
  }
  if (const CudaTarget *cuda = lookupMlirCudaTarget(s.gpuTarget)) {
    mlir::attn::AttnLowerFlashToNVGPUPassOptions kernel;
    kernel.target = cuda->name.str();
    pm.addPass(mlir::attn::createAttnLowerFlashToNVGPUPass(kernel));
    if (until != PipelineStage::loops)
      buildCudaPipeline(pm, *cuda, CudaOutput::cubin);
    return;
  }
  mlir::attn::AttnLowerFlashToCPUPassOptions lowering;
  lowering.target = s.cpu.name;
  lowering.qkKeys = s.schedule.get("qk_keys");
  lowering.qkRowVectors = s.schedule.get("qk_row_vectors");
  lowering.pvRows = s.schedule.get("pv_rows");
  lowering.pvVectors = s.schedule.get("pv_vectors");
  lowering.unroll = s.schedule.get("unroll");
  lowering.softmax = s.schedule.getChoice("softmax").str();
  lowering.countTiles = s.countTiles;
  pm.addPass(mlir::attn::createAttnLowerFlashToCPUPass(lowering));
  if (until == PipelineStage::lowered)
    return;
  buildPrepareLoopsPipeline(pm);
  if (until == PipelineStage::loops)
    return;
  buildLowerToLLVMPipeline(pm, s.cpu.name, s.cpu.cpuNeeds);
}
