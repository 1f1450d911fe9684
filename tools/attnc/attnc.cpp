//===- attnc.cpp - the attnc compiler driver ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   attnc SPEC --target T -o k.o        object + k.h
//   attnc SPEC --emit=STAGE             any stage of the pipeline
//   attnc explain SPEC --seq-q N --seq-kv M [--svg FILE]
//
// Stages: spec, normalized, tiled, loops, llvm, asm, obj, so. Everything up to
// the object runs in process; `so` links the object with the runtime using
// the C++ compiler attnc was built with.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "KernelCache.h"
#include "ParallelKernels.h"

#include "attnc/Conversion/AttnToHalide/FlashProblemFromOp.h"
#include "attnc/Conversion/Pipelines.h"
#include "attnc/InitAll.h"
#include "attnc/Target/CPU/CpuTunables.h"
#include "attnc/Target/CUDA/CudaTarget.h"
#include "attnc/Target/Registry.h"
#include "attnc/Tools/HelpOptions.h"
#include "attnc/Tools/SpecFile.h"
#include "attnc/Transforms/Passes.h"
#include "attnc/Target/CPU/CpuTarget.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Stage { spec, normalized, tiled, loops, halide, ptx, llvm, assembly, obj, so };

cl::OptionCategory attncCat("attnc: compile options");
cl::OptionCategory explainCat("attnc: explain options (attnc explain SPEC ...)");
cl::OptionCategory mlirCat("mlir: pass manager and printing options (apply to every stage's passes)");

cl::SubCommand explainCmd("explain", "Tile map, FLOPs and schedule of a spec");
cl::opt<std::string> specFile(cl::Positional, cl::desc("SPEC"),
                              cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd),
                              cl::cat(attncCat));
cl::opt<std::string> outputFile("o", cl::desc("Output file"), cl::value_desc("FILE"),
                                cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
cl::opt<std::string> backendName("backend", cl::desc("Code generator: mlir or halide"),
                                 cl::init("mlir"), cl::sub(cl::SubCommand::getTopLevel()),
                                 cl::sub(explainCmd), cl::cat(attncCat));
cl::opt<std::string> targetName("target",
                                cl::desc("Target (see --list-targets): x86-64-avx512, "
                                         "x86-64-avx512-bf16, x86-64-avx2, x86-64, host, or "
                                         "several, comma-separated, best first, for one "
                                         "object that picks at run time; cuda-sm80, "
                                         "cuda-sm90a (CUDA tensor cores); with "
                                         "--backend=halide "
                                         "cuda-sm80, cuda-sm90, opencl"),
                                cl::init("x86-64-avx512"),
                                cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd),
                                cl::cat(attncCat));
cl::list<std::string> scheduleArgs(
    "schedule", cl::desc("Set tunables, name=value[,name=value...] (see --list-tunables)"),
    cl::value_desc("NAME=VALUE"), cl::CommaSeparated,
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd), cl::cat(attncCat));
cl::opt<std::string> tuningDb(
    "tuning-db",
    cl::desc("Take each kernel's schedule (and backend) from this attnc-tune DB; explicit "
             "--backend and --schedule values override it"),
    cl::value_desc("DB"), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd),
    cl::cat(attncCat));
cl::opt<std::string> kernelCacheDir(
    "kernel-cache",
    cl::desc("Keep the --emit=obj, so and ptx files compiled in DIR and reuse them for the "
             "same spec, options and compiler (default: $ATTNC_KERNEL_CACHE; empty: off)"),
    cl::value_desc("DIR"), cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
cl::opt<bool> listTargets("list-targets",
                          cl::desc("List backends and targets, and whether this machine "
                                   "can run each"),
                          cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
cl::opt<bool> listTunables("list-tunables",
                           cl::desc("List the tunables of --backend for --target: default, "
                                    "range, meaning"),
                           cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
cl::opt<Stage> emit(
    "emit", cl::desc("Stage to write"), cl::init(Stage::obj),
    cl::values(clEnumValN(Stage::spec, "spec", "the spec, verified"),
               clEnumValN(Stage::normalized, "normalized", "after attn-normalize"),
               clEnumValN(Stage::tiled, "tiled", "attn.flash, the target-neutral tiled form"),
               clEnumValN(Stage::loops, "loops", "scf/vector/memref loops, input of LLVM lowering"),
               clEnumValN(Stage::halide, "halide",
                          "--backend=halide: the Halide pipeline's lowered statement"),
               clEnumValN(Stage::ptx, "ptx",
                          "a CUDA target: the kernels' PTX"),
               clEnumValN(Stage::llvm, "llvm", "optimized LLVM IR"),
               clEnumValN(Stage::assembly, "asm", "assembly"),
               clEnumValN(Stage::obj, "obj", "object file and C header (default)"),
               clEnumValN(Stage::so, "so", "shared object for attnc-run")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
cl::opt<unsigned> jobs("jobs",
                       cl::desc("Threads compiling the kernels of a spec (0: one per core); "
                                "MLIR's and LLVM's debugging options compile on one"),
                       cl::init(0), cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
// Test instrumentation, never part of a production build: hidden from --help.
cl::opt<bool> countTiles("count-tiles",
                         cl::desc("Instrument: count visited KV tiles in <kernel>_tiles_visited"),
                         cl::Hidden, cl::sub(cl::SubCommand::getTopLevel()));
// The build's step that writes the Halide runtime objects attnc ships.
cl::opt<std::string> halideRuntimes(
    "halide-runtimes",
    cl::desc("Write Halide's runtime for each --backend=halide target to DIR/<target>.o, "
             "and nothing else"),
    cl::value_desc("DIR"), cl::Hidden, cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(1), cl::sub(explainCmd),
                       cl::cat(explainCat));
cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length"), cl::init(0), cl::sub(explainCmd),
                      cl::cat(explainCat));
cl::opt<int64_t> seqKv("seq-kv", cl::desc("Key/value length (default: seq-q)"),
                       cl::init(0), cl::sub(explainCmd), cl::cat(explainCat));
cl::opt<std::string> svgFile("svg", cl::desc("Draw the tile map as SVG"), cl::sub(explainCmd),
                             cl::cat(explainCat));

/// Off unless --kernel-cache or ATTNC_KERNEL_CACHE names a directory (main).
attnc::KernelCache kernelCache;

/// Writes the --emit=obj, so or ptx file `path` with `write`, or copies it
/// from the kernel cache (KernelCache.h).
llvm::Error cachedOutput(StringRef path, llvm::function_ref<llvm::Error()> write) {
  StringRef ext = emit == Stage::so ? "so" : emit == Stage::ptx ? "ptx" : "o";
  return kernelCache.produce(path, ext, write);
}

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// --jobs, or 1 when an option of MLIR or LLVM is given: their printing,
/// timing and debugging options assume one pass manager at a time.
unsigned compileJobs() {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    if (option->getNumOccurrences() && !llvm::is_contained(option->Categories, &attncCat))
      return 1;
  }
  return jobs;
}

/// A failure whose diagnostic has been printed already: main adds nothing.
llvm::Error alreadyReported() { return error(""); }

/// Runs the (backend, target) pipeline up to `until`, with MLIR's pass
/// manager options (--mlir-print-ir-after-all, --mlir-timing, ...) applied.
llvm::Error runPipeline(ModuleOp module, const attnc::Selection &selection,
                        attnc::PipelineStage until) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return error("invalid MLIR pass manager options");
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  attnc::buildPipeline(pm, selection, until);
  // A pass that fails has said why at the spec's line; a second, vaguer error
  // would only bury that. An unexplained failure still gets one.
  bool explained = false;
  ScopedDiagnosticHandler watch(module->getContext(), [&](Diagnostic &d) {
    explained |= d.getSeverity() == DiagnosticSeverity::Error;
    return failure(); // and on to the printing handler
  });
  if (failed(pm.run(module)))
    return explained ? alreadyReported()
                     : error("the " + selection.backend + " pipeline for " +
                             selection.cpu.name + " failed");
  return llvm::Error::success();
}

/// Where to write: -o, or the spec's stem with `ext` for binary stages, or stdout.
std::string outputPath(StringRef ext) {
  if (!outputFile.empty())
    return outputFile;
  if (ext.empty())
    return "-";
  return (llvm::sys::path::stem(specFile) + ext).str();
}

llvm::Error writeText(StringRef path, function_ref<void(llvm::raw_ostream &)> fn) {
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    return error(message);
  fn(out->os());
  out->keep();
  return llvm::Error::success();
}

/// Runs the C++ compiler attnc was built with (as the linker) on `args`;
/// `what` names the step in the error, which says why when the compiler's
/// own messages (on stderr) do not.
llvm::Error runCompiler(llvm::ArrayRef<StringRef> args, const llvm::Twine &what) {
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(ATTNC_CXX_COMPILER, args, std::nullopt, {}, 0, 0, &message);
  if (status == 0)
    return llvm::Error::success();
  if (message.empty())
    message = std::string(ATTNC_CXX_COMPILER) + " exited with status " + std::to_string(status);
  return error(what + " failed: " + message);
}

/// The prefix attnc runs from (the parent of its bin/), where the build and
/// the install tree alike keep lib/.
llvm::SmallString<256> installPrefix(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&installPrefix);
  return llvm::SmallString<256>(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
}

/// Links `object` and the runtime into a shared object.
llvm::Error linkShared(StringRef object, StringRef output, const char *argv0) {
  llvm::SmallString<256> runtime = installPrefix(argv0);
  llvm::sys::path::append(runtime, "lib", "libattnc_runtime.a");
  if (!llvm::sys::fs::exists(runtime))
    return error("cannot find the runtime library at " + runtime);
  llvm::StringRef args[] = {ATTNC_CXX_COMPILER, "-shared", "-o", output, object,
                            runtime, "-lm", "-lpthread"};
  return runCompiler(args, "linking " + output);
}

/// The header describes the normalized spec: normalizes `spec`, a copy the
/// pipeline did not touch, in place.
llvm::Error writeHeaderFor(ModuleOp spec, StringRef objPath) {
  PassManager pm(spec->getContext());
  pm.addPass(attn::createAttnNormalizePass());
  if (failed(pm.run(spec)))
    return error("attn-normalize failed");
  llvm::SmallString<256> header(objPath);
  llvm::sys::path::replace_extension(header, ".h");
  return writeText(header, [&](auto &os) { attnc::writeHeader(spec, specFile, os); });
}

/// Objects in temporary files, merged into one and removed at the end.
class ObjectParts {
public:
  ~ObjectParts() {
    for (const std::string &part : parts) {
      llvm::sys::fs::remove(part);
      llvm::sys::DontRemoveFileOnSignal(part);
    }
  }
  /// A new temporary object path, removed at the end and on SIGINT / SIGTERM.
  llvm::Expected<std::string> add() {
    llvm::SmallString<128> created;
    if (llvm::sys::fs::createTemporaryFile("attnc-part", "o", created))
      return error("cannot create a temporary object file");
    llvm::sys::RemoveFileOnSignal(created);
    return parts.emplace_back(created.str());
  }
  /// An existing object to merge too, kept afterwards.
  void addKept(StringRef path) { kept.push_back(path.str()); }
  /// Merges the parts into one relocatable object (the system linker's -r).
  llvm::Error merge(StringRef output) const {
    SmallVector<StringRef> args{ATTNC_CXX_COMPILER, "-r", "-nostdlib", "-o", output};
    args.append(parts.begin(), parts.end());
    args.append(kept.begin(), kept.end());
    return runCompiler(args, "merging objects into " + output);
  }

private:
  std::vector<std::string> parts, kept;
};

/// Writes the object (or, for --emit=so, the shared object) and the header.
llvm::Error writeOutputs(llvm::function_ref<llvm::Error(StringRef)> writeObject, ModuleOp spec,
                         const char *argv0) {
  if (emit != Stage::so) {
    std::string objPath = outputPath(".o");
    if (llvm::Error err = cachedOutput(objPath, [&] { return writeObject(objPath); }))
      return err;
    return writeHeaderFor(spec, objPath);
  }
  std::string soPath = outputPath(".so");
  return cachedOutput(soPath, [&]() -> llvm::Error {
    // The object the shared one is linked from is a temporary part (removed at
    // the end), not a name next to the output, whose directory may not exist.
    ObjectParts temporary;
    llvm::Expected<std::string> objPath = temporary.add();
    if (!objPath)
      return objPath.takeError();
    if (llvm::Error err = writeObject(*objPath))
      return err;
    return linkShared(*objPath, soPath, argv0);
  });
}

/// Emits the LLVM-dialect `module` as an object at `path`; with `suffix`,
/// as one variant of a multi-target object (MultiTarget.cpp).
llvm::Error writeObjectFile(ModuleOp module, const attnc::CpuTarget &target, StringRef path,
                            StringRef suffix = "") {
  llvm::LLVMContext context;
  auto llvmModule = attnc::translateAndOptimize(module, target, context);
  if (!llvmModule)
    return llvmModule.takeError();
  if (!suffix.empty())
    attnc::suffixDefinitions(**llvmModule, suffix);
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    return error(message);
  if (llvm::Error err = attnc::emitMachineCode(**llvmModule, target, false, out->os()))
    return err;
  out->keep();
  return llvm::Error::success();
}

/// The mlir backend's object: each kernel compiled on its own (its own MLIR
/// and LLVM module, freed before the next), on --jobs threads, so compile
/// memory is one kernel's a thread whatever the spec's size, then the parts
/// merged in spec order.
llvm::Error writeKernelwiseObject(ModuleOp module, const attnc::Selection &selection,
                                  StringRef path) {
  SmallVector<attn::KernelOp> kernels(module.getOps<attn::KernelOp>());
  if (kernels.size() <= 1) {
    if (llvm::Error err = runPipeline(module, selection, attnc::PipelineStage::llvmDialect))
      return err;
    return writeObjectFile(module, selection.cpu, path);
  }
  ObjectParts parts;
  std::vector<std::string> paths;
  for (size_t i = 0; i < kernels.size(); ++i) {
    llvm::Expected<std::string> part = parts.add();
    if (!part)
      return part.takeError();
    paths.push_back(*part);
  }
  auto compileOne = [&](ModuleOp single, size_t index) -> llvm::Error {
    if (llvm::Error err = runPipeline(single, selection, attnc::PipelineStage::llvmDialect))
      return err;
    return writeObjectFile(single, selection.cpu, paths[index]);
  };
  if (llvm::Error err = attnc::compileKernels(module, compileJobs(), compileOne))
    return err;
  return parts.merge(path);
}

/// The Halide backend's input: each kernel of the tiled form as plain data.
llvm::Expected<std::vector<attnc::halide::FlashProblem>>
halideProblems(ModuleOp module, const attnc::Selection &selection) {
  OwningOpRef<ModuleOp> tiled = module.clone();
  if (llvm::Error err = runPipeline(*tiled, selection, attnc::PipelineStage::tiled))
    return std::move(err);
  std::vector<attnc::halide::FlashProblem> problems;
  for (attn::KernelOp kernel : tiled->getOps<attn::KernelOp>()) {
    FailureOr<attnc::halide::FlashProblem> problem = attn::flashProblemFromOp(kernel);
    if (failed(problem))
      return error("the Halide backend cannot compile kernel '" + kernel.getSymName() + "'");
    // The CPU hand schedule's unroll; the GPU schedules have none (0).
    problem->unroll = selection.schedule.declares("unroll") ? selection.schedule.get("unroll") : 0;
    problems.push_back(std::move(*problem));
  }
  return problems;
}

/// The Halide runtime object the build wrote for `target`
/// (<prefix>/ATTNC_HALIDE_RUNTIME_DIR/<target>.o), or "" when there is none:
/// then each pipeline object carries its own.
std::string shippedHalideRuntime(StringRef target, const char *argv0) {
  llvm::SmallString<256> path = installPrefix(argv0);
  llvm::sys::path::append(path, ATTNC_HALIDE_RUNTIME_DIR, target + ".o");
  return llvm::sys::fs::exists(path) ? path.str().str() : "";
}

/// --halide-runtimes: each Halide target's runtime object in `dir`.
llvm::Error writeHalideRuntimes(StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create " + dir + ": " + ec.message());
  for (auto names : {llvm::ArrayRef(attnc::halide::kHalideCpuTargets),
                     llvm::ArrayRef(attnc::halide::kHalideGpuTargets)})
    for (llvm::StringRef name : names) {
      attnc::halide::HalideTarget target;
      if (!attnc::halide::lookupHalideTarget(name.str(), target))
        return error("the Halide backend has no target " + name);
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, name + ".o");
      std::string message = attnc::halide::compileRuntimeObject(target, path.str().str());
      if (!message.empty())
        return error("the Halide runtime for " + name + ": " + message);
    }
  return llvm::Error::success();
}

/// The tile functions (the LLVM-dialect `module`) and each problem's Halide
/// pipeline as objects in temporary files, merged into `objPath` with the
/// shipped `runtime` object when there is one ("": each pipeline carries its own).
llvm::Error writeHalideObject(ModuleOp module, const attnc::Selection &selection,
                              ArrayRef<attnc::halide::FlashProblem> problems,
                              const attnc::halide::HalideTarget &target,
                              const std::string &source, StringRef objPath,
                              const std::string &runtime) {
  ObjectParts parts;
  llvm::Expected<std::string> path = parts.add();
  if (!path)
    return path.takeError();
  if (llvm::Error err = writeObjectFile(module, selection.cpu, *path))
    return err;
  if (!runtime.empty())
    parts.addKept(runtime);
  for (const attnc::halide::FlashProblem &problem : problems) {
    path = parts.add();
    if (!path)
      return path.takeError();
    std::string message = attnc::halide::compileFlashObject(problem, target, source, *path,
                                                            /*withRuntime=*/runtime.empty());
    if (!message.empty())
      return error("kernel '" + problem.name + "': " + message);
  }
  return parts.merge(objPath);
}

/// --backend=halide from the tiled form: each kernel's Halide pipeline
/// (lib/Target/Halide) and the tile functions calling them (the MLIR pipeline
/// with attn-lower-flash-to-halide-call), merged into one object.
llvm::Error compileHalide(ModuleOp module, const attnc::Selection &selection,
                          const char *argv0) {
  if (emit == Stage::loops || emit == Stage::llvm || emit == Stage::assembly)
    return error("--backend=halide has no --emit=loops / llvm / asm stage; its pipeline "
                 "is printed by --emit=halide");
  auto problems = halideProblems(module, selection);
  if (!problems)
    return problems.takeError();
  attnc::halide::HalideTarget target;
  const std::string &name =
      selection.gpuTarget.empty() ? selection.cpu.name : selection.gpuTarget;
  if (!attnc::halide::lookupHalideTarget(name, target))
    return error("the Halide backend has no target " + name);
  std::string source = selection.schedule.getChoice("source").str();
  // A text stage: each kernel's text from `print`, which sets its message on failure.
  auto writeEachKernel = [&](auto print) -> llvm::Error {
    std::string text;
    for (const attnc::halide::FlashProblem &problem : *problems) {
      std::string message;
      text += print(problem, message);
      if (!message.empty())
        return error("kernel '" + problem.name + "': " + message);
    }
    return writeText(outputPath(""), [&](auto &os) { os << text; });
  };
  if (emit == Stage::ptx) {
    if (!llvm::StringRef(name).starts_with("cuda"))
      return error("--emit=ptx needs a CUDA target (cuda-sm80, cuda-sm90)");
    return cachedOutput(outputPath(""), [&] {
      return writeEachKernel([&](const auto &problem, std::string &message) {
        return attnc::halide::flashDeviceCode(problem, target, message);
      });
    });
  }
  if (emit == Stage::halide)
    return writeEachKernel([&](const auto &problem, std::string &message) {
      return attnc::halide::lowerFlashStmt(problem, target, source, message) + "\n";
    });
  OwningOpRef<ModuleOp> spec = module.clone();
  if (llvm::Error err = runPipeline(module, selection, attnc::PipelineStage::llvmDialect))
    return err;
  std::string runtime = shippedHalideRuntime(name, argv0);
  kernelCache.addInput("halide runtime", runtime);
  return writeOutputs(
      [&](StringRef objPath) {
        return writeHalideObject(module, selection, *problems, target, source, objPath,
                                 runtime);
      },
      *spec, argv0);
}

/// The backend and schedule for `target` from the command line and --tuning-db.
llvm::Expected<attnc::Selection> selectFor(ModuleOp module, std::string *notes,
                                           StringRef target) {
  attnc::BuildRequest request{backendName, target.str(), tuningDb,
                              backendName.getNumOccurrences() > 0, scheduleArgs};
  llvm::Expected<attnc::BuildChoice> choice = attnc::chooseBuild(module, request);
  if (!choice)
    return choice.takeError();
  if (notes)
    *notes = choice->notes;
  else if (choice->unmatched)
    llvm::WithColor::warning(llvm::errs(), "attnc")
        << "compiling with the default schedule where --tuning-db has no entry:\n"
        << choice->notes;
  return attnc::select(choice->backend, target, choice->schedule);
}

/// --emit=ptx of the mlir backend: each kernel's PTX, as gpu-module-to-binary
/// gives it to ptxas for the cubin the object embeds, headed by its launch.
llvm::Error writeMlirPtx(ModuleOp module, const attnc::Selection &selection) {
  if (llvm::Error err = runPipeline(module, selection, attnc::PipelineStage::loops))
    return err;
  llvm::StringMap<std::string> launches;
  module.walk([&](gpu::GPUFuncOp func) {
    auto bytes = func->getAttrOfType<IntegerAttr>("attn.dynamic_shared_bytes");
    std::optional<ArrayRef<int32_t>> block = func.getKnownBlockSize();
    if (bytes && block)
      launches[func.getName()] = llvm::formatv(
          "{0} threads per block, {1} bytes of dynamic shared memory", (*block)[0],
          bytes.getInt());
  });
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return error("invalid MLIR pass manager options");
  attnc::buildCudaPipeline(pm, *attnc::lookupMlirCudaTarget(selection.gpuTarget),
                           attnc::CudaOutput::ptx);
  if (failed(pm.run(module)))
    return alreadyReported();
  return writeText(outputPath(""), [&](auto &os) {
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      StringRef kernel = binary.getSymName().drop_back(strlen("_gpu"));
      os << "// attnc: kernel " << kernel << ": " << launches[kernel] << "\n";
      for (Attribute object : binary.getObjects())
        os << cast<gpu::ObjectAttr>(object).getObject().getValue() << "\n";
    }
  });
}

/// `--target=a,b,c`: one object with each target's code and an entry point
/// per kernel that picks the variant for the running CPU (MultiTarget.cpp).
llvm::Error compileMultiTarget(ModuleOp module, ArrayRef<StringRef> targets,
                               const char *argv0) {
  if (emit != Stage::obj && emit != Stage::so)
    return error("--emit=obj and --emit=so take several targets; the other stages show one "
                 "target's code: give one --target");
  std::vector<attnc::Selection> variants;
  std::vector<attnc::CpuTarget> cpus;
  for (StringRef target : targets) {
    auto selection = selectFor(module, nullptr, target);
    if (!selection)
      return selection.takeError();
    if (!selection->cpu.isX86())
      return error("multi-target objects pick their variant by cpuid: x86-64 targets only, "
                   "not " + target);
    if (selection->backend != "mlir" || !selection->gpuTarget.empty())
      return error("multi-target objects are built by the mlir backend for CPU targets; "
                   "--backend=" + selection->backend + " --target=" + target +
                   " takes one target");
    if (llvm::any_of(cpus, [&](auto &c) { return c.name == target; }))
      return error("--target lists " + target + " twice");
    cpus.push_back(selection->cpu);
    variants.push_back(std::move(*selection));
  }
  std::vector<std::string> kernels;
  for (attn::KernelOp kernel : module.getOps<attn::KernelOp>())
    kernels.push_back(kernel.getSymName().str());
  OwningOpRef<ModuleOp> spec = module.clone();
  return writeOutputs(
      [&](StringRef objPath) -> llvm::Error {
        ObjectParts parts;
        for (const attnc::Selection &variant : variants) {
          OwningOpRef<ModuleOp> code = module.clone();
          if (llvm::Error err = runPipeline(*code, variant, attnc::PipelineStage::llvmDialect))
            return err;
          llvm::Expected<std::string> path = parts.add();
          if (!path)
            return path.takeError();
          if (llvm::Error err = writeObjectFile(*code, variant.cpu, *path, variant.cpu.name))
            return err;
        }
        llvm::Expected<std::string> path = parts.add();
        if (!path)
          return path.takeError();
        if (llvm::Error err = attnc::writeDispatcher(kernels, cpus, *path))
          return err;
        return parts.merge(objPath);
      },
      *spec, argv0);
}

/// --list-tunables: the table of each target in `targets` (comma-separated).
llvm::Error listTunablesOf(StringRef targets) {
  SmallVector<StringRef> names;
  targets.split(names, ',', -1, /*KeepEmpty=*/false);
  for (StringRef target : names)
    if (llvm::Error err = attnc::printTargetTunables(backendName, target, llvm::outs()))
      return err;
  return llvm::Error::success();
}

llvm::Error compile(ModuleOp module, const char *argv0) {
  SmallVector<StringRef> targets;
  StringRef(targetName).split(targets, ',', -1, /*KeepEmpty=*/false);
  if (targets.size() > 1)
    return compileMultiTarget(module, targets, argv0);
  auto selection = selectFor(module, nullptr, targetName);
  if (!selection)
    return selection.takeError();
  selection->countTiles = countTiles;
  auto printModule = [&] {
    return writeText(outputPath(""), [&](auto &os) { module.print(os); });
  };
  if (emit == Stage::spec)
    return printModule();
  bool mlirCuda = selection->backend == "mlir" && !selection->gpuTarget.empty();
  if (emit == Stage::ptx && mlirCuda)
    return cachedOutput(outputPath(""), [&] { return writeMlirPtx(module, *selection); });
  if (emit == Stage::halide && selection->backend != "halide")
    return error("--emit=halide needs --backend=halide");
  if (emit == Stage::ptx && selection->backend != "halide")
    return error("--emit=ptx needs a CUDA target (cuda-sm80, cuda-sm90a, or with "
                 "--backend=halide cuda-sm90)");
  if (selection->backend == "halide" && emit != Stage::normalized && emit != Stage::tiled)
    return compileHalide(module, *selection, argv0);
  std::optional<attnc::PipelineStage> mlirStage;
  if (emit == Stage::normalized)
    mlirStage = attnc::PipelineStage::normalized;
  else if (emit == Stage::tiled)
    mlirStage = attnc::PipelineStage::tiled;
  else if (emit == Stage::loops)
    mlirStage = attnc::PipelineStage::loops;
  if (mlirStage) {
    if (llvm::Error err = runPipeline(module, *selection, *mlirStage))
      return err;
    return printModule();
  }
  const attnc::CpuTarget *target = &selection->cpu;
  if (emit == Stage::so && !target->isX86())
    return error("--emit=so links for this machine; for " + target->name +
                 " write an object (--emit=obj) and link it with that target's toolchain");
  if (emit == Stage::obj || emit == Stage::so) {
    OwningOpRef<ModuleOp> spec = module.clone();
    return writeOutputs(
        [&](StringRef objPath) { return writeKernelwiseObject(module, *selection, objPath); },
        *spec, argv0);
  }
  // --emit=llvm / asm: the whole module at once.
  if (llvm::Error err = runPipeline(module, *selection, attnc::PipelineStage::llvmDialect))
    return err;
  llvm::LLVMContext context;
  auto llvmModule = attnc::translateAndOptimize(module, *target, context);
  if (!llvmModule)
    return llvmModule.takeError();
  if (emit == Stage::llvm)
    return writeText(outputPath(""), [&](auto &os) { (*llvmModule)->print(os, nullptr); });
  std::string message;
  auto out = openOutputFile(outputPath(""), &message);
  if (!out)
    return error(message);
  if (llvm::Error err = attnc::emitMachineCode(**llvmModule, *target, true, out->os()))
    return err;
  out->keep();
  return llvm::Error::success();
}

/// Of `--target=a,b,c`, the variant a multi-target object runs here (the
/// first this CPU runs), with a line saying so; a single target as it is.
llvm::Expected<std::string> explainedTarget(std::string &notes) {
  SmallVector<StringRef> targets;
  StringRef(targetName).split(targets, ',', -1, /*KeepEmpty=*/false);
  if (targets.size() <= 1)
    return targetName.getValue();
  for (StringRef target : targets) {
    auto cpu = attnc::lookupCpuTarget(target);
    if (!cpu)
      return cpu.takeError();
    if (cpu->runsHere()) {
      notes += "variants, best first: " + llvm::join(targets, ", ") + "; this machine runs " +
               target.str() + " (unless ATTNC_TARGET forces another)\n";
      return target.str();
    }
  }
  return error("none of the variants " + targetName + " runs on this machine");
}

llvm::Error runExplain(ModuleOp module) {
  std::string notes;
  auto target = explainedTarget(notes);
  if (!target)
    return target.takeError();
  std::string tuning;
  auto selection = selectFor(module, &tuning, *target);
  notes += tuning;
  if (!selection)
    return selection.takeError();
  if (llvm::Error err = runPipeline(module, *selection, attnc::PipelineStage::normalized))
    return err;
  attnc::ExplainOptions o{*selection};
  o.batch = batch;
  o.seqQ = seqQ;
  o.seqKv = seqKv ? int64_t(seqKv) : int64_t(seqQ);
  o.svgPath = svgFile;
  o.tuningNotes = notes;
  return attnc::explain(module, o, llvm::outs());
}

void printTargets(llvm::raw_ostream &os, const char *argv0) {
  os << llvm::formatv("{0,-18} {1,-8} {2,-16} {3,-52} {4}\n", "target", "backend",
                      "device", "needs", "runs here");
  for (const attnc::TargetEntry &t : attnc::listTargets())
    os << llvm::formatv("{0,-18} {1,-8} {2,-16} {3,-52} {4}\n", t.name, t.backend,
                        t.device, t.needs, t.runsHere ? "yes" : "no");
  attnc::printBackends(os);
  std::string runtime = shippedHalideRuntime(attnc::halide::kHalideCpuTargets[0], argv0);
  if (!runtime.empty())
    os << "halide runtime objects: " << llvm::sys::path::parent_path(runtime)
       << " (merged into each --backend=halide object)\n";
  else
    os << "halide runtime objects: none next to this attnc (" << ATTNC_HALIDE_RUNTIME_DIR
       << "); each --backend=halide kernel carries its own\n";
  if (kernelCache.enabled())
    os << "kernel cache: " << kernelCache.directory() << " (build id "
       << attnc::kernelCacheBuildId().take_front(12) << ")\n";
  else
    os << "kernel cache: off (set ATTNC_KERNEL_CACHE or --kernel-cache)\n";
}

/// 0, or 1 after reporting `err` (unless already reported: an empty message).
int exitStatus(llvm::Error err) {
  if (!err)
    return 0;
  llvm::outs().flush();
  std::string message = llvm::toString(std::move(err));
  if (!message.empty())
    llvm::WithColor::error(llvm::errs(), "attnc") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  attnc::showOnlyOptionsIn({&attncCat, &explainCat, &mlirCat}, "mlir-", &mlirCat);
  cl::ParseCommandLineOptions(argc, argv, "attnc: ahead-of-time attention kernel compiler\n");
  const char *cacheEnv = std::getenv("ATTNC_KERNEL_CACHE");
  const char *verboseEnv = std::getenv("ATTNC_KERNEL_CACHE_VERBOSE");
  kernelCache = attnc::KernelCache(
      kernelCacheDir.getNumOccurrences() ? kernelCacheDir.getValue() : cacheEnv ? cacheEnv : "",
      llvm::ArrayRef(argv + 1, argc - 1), verboseEnv && StringRef(verboseEnv) == "1");
  if (!halideRuntimes.empty())
    return exitStatus(writeHalideRuntimes(halideRuntimes));
  if (listTargets || listTunables) {
    if (listTargets)
      printTargets(llvm::outs(), argv[0]);
    if (listTunables)
      return exitStatus(listTunablesOf(targetName));
    return 0;
  }
  if (specFile.empty()) {
    llvm::WithColor::error(llvm::errs(), "attnc") << "no spec given (attnc --help)\n";
    return 1;
  }
  attnc::SpecFile spec;
  OwningOpRef<ModuleOp> module = spec.parse(specFile, "attnc");
  int status = module ? exitStatus(explainCmd ? runExplain(*module) : compile(*module, argv[0]))
                      : 1;
  kernelCache.finish();
  return status;
}
