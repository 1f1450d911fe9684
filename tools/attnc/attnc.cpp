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

#include "attnc/Dialect/Attn/ModInputs.h"
#include "attnc/InitAll.h"
#include "attnc/Reference/Npy.h"
#include "attnc/Target/Compile.h"
#include "attnc/Target/Registry.h"
#include "attnc/Tools/HelpOptions.h"
#include "attnc/Tools/SpecFile.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

using Stage = attnc::EmitStage;

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
                                 cl::init(attnc::backendNames().front().str()),
                                 cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd),
                                 cl::cat(attncCat));
cl::opt<std::string> targetName("target",
                                cl::desc("Target (see --list-targets): x86-64-avx512, "
                                         "x86-64-avx512-bf16, x86-64-avx2, x86-64, host, or "
                                         "several, comma-separated, best first, for one "
                                         "object that picks at run time; cuda-sm80, "
                                         "cuda-sm90a (CUDA tensor cores); with "
                                         "--backend=halide "
                                         "cuda-sm80, cuda-sm90, opencl"),
                                cl::init(attnc::kDefaultTarget),
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
cl::opt<bool> verifyEach("verify-each",
                         cl::desc("Verify the IR after every pass (default: after the last)"),
                         cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCat));
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
cl::list<std::string> explainInputs(
    "input", cl::desc("NAME=FILE.npy: an input a mask_mod reads, whose values decide its tiles "
                      "as the kernels' run-time analysis does"),
    cl::value_desc("NAME=FILE"), cl::sub(explainCmd), cl::cat(explainCat));

/// Off unless --kernel-cache or ATTNC_KERNEL_CACHE names a directory (main).
attnc::KernelCache kernelCache;

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

/// Where to write: -o, or the spec's stem with `ext` for binary stages, or stdout.
std::string outputPath(StringRef ext) {
  if (!outputFile.empty())
    return outputFile;
  if (ext.empty())
    return "-";
  return (llvm::sys::path::stem(specFile) + ext).str();
}

/// The prefix attnc runs from (the parent of its bin/), where the build and
/// the install tree alike keep lib/.
std::string installPrefix(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&installPrefix);
  return llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)).str();
}

/// What the library needs to write --emit's stage: the file, and the kernel
/// cache for the obj, so and ptx files.
attnc::CompileOutput compileOutput(const char *argv0) {
  attnc::CompileOutput out;
  out.path = outputPath(emit == Stage::obj ? ".o" : emit == Stage::so ? ".so" : "");
  out.installPrefix = installPrefix(argv0);
  out.specFile = specFile;
  out.jobs = compileJobs();
  out.produce = [](StringRef path, llvm::function_ref<llvm::Error()> write) {
    StringRef ext = emit == Stage::so ? "so" : emit == Stage::ptx ? "ptx" : "o";
    return kernelCache.produce(path, ext, write);
  };
  out.noteInput = [](StringRef what, StringRef path) { kernelCache.addInput(what, path); };
  return out;
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
  if (targets.size() > 1) {
    std::vector<attnc::Selection> variants;
    for (StringRef target : targets) {
      auto selection = selectFor(module, nullptr, target);
      if (!selection)
        return selection.takeError();
      selection->verifyEachPass = verifyEach;
      variants.push_back(std::move(*selection));
    }
    return attnc::compileMultiTarget(module, variants, emit, compileOutput(argv0));
  }
  auto selection = selectFor(module, nullptr, targetName);
  if (!selection)
    return selection.takeError();
  selection->countTiles = countTiles;
  selection->verifyEachPass = verifyEach;
  return attnc::compileSpec(module, *selection, emit, compileOutput(argv0));
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
  if (llvm::Error err =
          attnc::runPipeline(module, *selection, attnc::PipelineStage::normalized))
    return err;
  attnc::ExplainOptions o{*selection};
  o.batch = batch;
  o.seqQ = seqQ;
  o.seqKv = seqKv ? int64_t(seqKv) : int64_t(seqQ);
  o.svgPath = svgFile;
  o.tuningNotes = notes;
  for (const std::string &given : explainInputs) {
    auto [name, file] = StringRef(given).split('=');
    mlir::attn::ModInputAttr decl;
    for (mlir::attn::KernelOp kernel : module.getOps<mlir::attn::KernelOp>())
      if (!decl && kernel.getSpec())
        decl = mlir::attn::findModInput(kernel.getSpec().getInputsAttr(), name);
    if (file.empty() || !decl)
      return error("--input " + given + ": expected NAME=FILE.npy with NAME an input of the "
                   "spec's kernels");
    llvm::Expected<attnc::HostTensor> t =
        attnc::readNpy(file, *attnc::elementTypeOf(decl.getElementType()));
    if (!t)
      return t.takeError();
    o.inputs[name] = std::move(*t);
  }
  return attnc::explain(module, o, llvm::outs());
}

void printTargets(llvm::raw_ostream &os, const char *argv0) {
  os << llvm::formatv("{0,-18} {1,-8} {2,-16} {3,-52} {4}\n", "target", "backend",
                      "device", "needs", "runs here");
  for (const attnc::TargetEntry &t : attnc::listTargets())
    os << llvm::formatv("{0,-18} {1,-8} {2,-16} {3,-52} {4}\n", t.name, t.backend,
                        t.device, t.needs, t.runsHere ? "yes" : "no");
  attnc::printBackends(os);
  attnc::printHalideRuntimes(installPrefix(argv0), os);
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
  // The build id keys caches of compiled kernels outside attnc too (the Python package's).
  cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "attnc build id " << attnc::kernelCacheBuildId() << "\n"; });
  cl::ParseCommandLineOptions(argc, argv, "attnc: ahead-of-time attention kernel compiler\n");
  const char *cacheEnv = std::getenv("ATTNC_KERNEL_CACHE");
  const char *verboseEnv = std::getenv("ATTNC_KERNEL_CACHE_VERBOSE");
  kernelCache = attnc::KernelCache(
      kernelCacheDir.getNumOccurrences() ? kernelCacheDir.getValue() : cacheEnv ? cacheEnv : "",
      llvm::ArrayRef(argv + 1, argc - 1), verboseEnv && StringRef(verboseEnv) == "1");
  if (!halideRuntimes.empty())
    return exitStatus(attnc::writeHalideRuntimes(halideRuntimes));
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
