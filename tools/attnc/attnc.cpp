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

#include "attnc/Conversion/Pipelines.h"
#include "attnc/InitAll.h"
#include "attnc/Tools/SpecFile.h"
#include "attnc/Target/CPU/CpuTarget.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Stage { spec, normalized, tiled, loops, llvm, assembly, obj, so };

cl::SubCommand explainCmd("explain", "Tile map, FLOPs and schedule of a spec");
cl::opt<std::string> specFile(cl::Positional, cl::desc("SPEC"), cl::Required,
                              cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd));
cl::opt<std::string> outputFile("o", cl::desc("Output file"), cl::value_desc("FILE"),
                                cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<std::string> targetName("target", cl::desc("x86-64-avx512, x86-64-avx2 or host"),
                                cl::init("x86-64-avx512"),
                                cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd));
cl::opt<Stage> emit(
    "emit", cl::desc("Stage to write"), cl::init(Stage::obj),
    cl::values(clEnumValN(Stage::spec, "spec", "the spec, verified"),
               clEnumValN(Stage::normalized, "normalized", "after attn-normalize"),
               clEnumValN(Stage::tiled, "tiled", "Flash form (attn-tile-flash)"),
               clEnumValN(Stage::loops, "loops", "scf/vector/memref loops, input of LLVM lowering"),
               clEnumValN(Stage::llvm, "llvm", "optimized LLVM IR"),
               clEnumValN(Stage::assembly, "asm", "assembly"),
               clEnumValN(Stage::obj, "obj", "object file and C header (default)"),
               clEnumValN(Stage::so, "so", "shared object for attnc-run")),
    cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<int64_t> blockQ("block-q", cl::desc("Query rows per tile (0: by head_dim)"),
                        cl::init(0), cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd));
cl::opt<int64_t> blockKv("block-kv", cl::desc("Keys per KV tile"), cl::init(64),
                         cl::sub(cl::SubCommand::getTopLevel()), cl::sub(explainCmd));
cl::opt<bool> countTiles("count-tiles",
                         cl::desc("Instrument: count visited KV tiles in <kernel>_tiles_visited"),
                         cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(1), cl::sub(explainCmd));
cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length"), cl::init(0), cl::sub(explainCmd));
cl::opt<int64_t> seqKv("seq-kv", cl::desc("Key/value length (default: seq-q)"),
                       cl::init(0), cl::sub(explainCmd));
cl::opt<std::string> svgFile("svg", cl::desc("Draw the tile map as SVG"), cl::sub(explainCmd));

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

LogicalResult runPasses(ModuleOp module, function_ref<void(OpPassManager &)> build) {
  PassManager pm(module->getContext());
  build(pm);
  return pm.run(module);
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

/// Links `object` and the runtime into a shared object.
llvm::Error linkShared(StringRef object, StringRef output, const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&linkShared);
  llvm::SmallString<256> runtime(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(runtime, "lib", "libattnc_runtime.a");
  if (!llvm::sys::fs::exists(runtime))
    return error("cannot find the runtime library at " + runtime);
  llvm::StringRef args[] = {ATTNC_CXX_COMPILER, "-shared", "-o", output, object,
                            runtime, "-lm", "-lpthread"};
  std::string message;
  if (llvm::sys::ExecuteAndWait(ATTNC_CXX_COMPILER, args, std::nullopt, {}, 0, 0, &message))
    return error("linking " + output + " failed: " + message);
  return llvm::Error::success();
}

llvm::Error compile(ModuleOp module, const char *argv0) {
  auto target = attnc::lookupCpuTarget(targetName);
  if (!target)
    return target.takeError();
  if (emit == Stage::spec)
    return writeText(outputPath(""), [&](auto &os) { module.print(os); });
  if (failed(runPasses(module, [](OpPassManager &pm) { pm.addPass(attn::createAttnNormalizePass()); })))
    return error("attn-normalize failed");
  if (emit == Stage::normalized)
    return writeText(outputPath(""), [&](auto &os) { module.print(os); });
  OwningOpRef<ModuleOp> normalized = module.clone();

  attn::AttnTileFlashPassOptions options;
  options.blockQ = blockQ;
  options.blockKv = blockKv;
  if (failed(runPasses(module, [&](OpPassManager &pm) { pm.addPass(attn::createAttnTileFlashPass(options)); })))
    return error("attn-tile-flash failed");
  if (emit == Stage::tiled)
    return writeText(outputPath(""), [&](auto &os) { module.print(os); });
  attn::AttnLowerFlashToCPUPassOptions lowering;
  lowering.target = target->name;
  lowering.countTiles = countTiles;
  if (failed(runPasses(module, [&](OpPassManager &pm) { pm.addPass(attn::createAttnLowerFlashToCPUPass(lowering)); })))
    return error("attn-lower-flash-to-cpu failed");
  if (failed(runPasses(module, attnc::buildPrepareLoopsPipeline)))
    return error("preparing the loops stage failed");
  if (emit == Stage::loops)
    return writeText(outputPath(""), [&](auto &os) { module.print(os); });
  if (failed(runPasses(module, attnc::buildLowerToLLVMPipeline)))
    return error("lowering to the LLVM dialect failed");

  llvm::LLVMContext context;
  auto llvmModule = attnc::translateAndOptimize(module, *target, context);
  if (!llvmModule)
    return llvmModule.takeError();
  if (emit == Stage::llvm)
    return writeText(outputPath(""), [&](auto &os) { (*llvmModule)->print(os, nullptr); });
  if (emit == Stage::assembly) {
    std::string message;
    auto out = openOutputFile(outputPath(""), &message);
    if (!out)
      return error(message);
    if (llvm::Error err = attnc::emitMachineCode(**llvmModule, *target, true, out->os()))
      return err;
    out->keep();
    return llvm::Error::success();
  }

  std::string objPath = emit == Stage::so ? outputPath(".so") + ".o" : outputPath(".o");
  {
    std::string message;
    auto out = openOutputFile(objPath, &message);
    if (!out)
      return error(message);
    if (llvm::Error err = attnc::emitMachineCode(**llvmModule, *target, false, out->os()))
      return err;
    out->keep();
  }
  if (emit == Stage::so) {
    llvm::Error err = linkShared(objPath, outputPath(".so"), argv0);
    llvm::sys::fs::remove(objPath);
    return err;
  }
  llvm::SmallString<256> header(objPath);
  llvm::sys::path::replace_extension(header, ".h");
  return writeText(header, [&](auto &os) { attnc::writeHeader(*normalized, specFile, os); });
}

llvm::Error runExplain(ModuleOp module) {
  auto target = attnc::lookupCpuTarget(targetName);
  if (!target)
    return target.takeError();
  if (failed(runPasses(module, [](OpPassManager &pm) { pm.addPass(attn::createAttnNormalizePass()); })))
    return error("attn-normalize failed");
  attnc::ExplainOptions o;
  o.batch = batch;
  o.seqQ = seqQ;
  o.seqKv = seqKv ? int64_t(seqKv) : int64_t(seqQ);
  o.blockQ = blockQ;
  o.blockKv = blockKv;
  o.vectorWidth = target->vectorWidth;
  o.targetName = target->name;
  o.svgPath = svgFile;
  return attnc::explain(module, o, llvm::outs());
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "attnc: ahead-of-time attention kernel compiler\n");
  attnc::SpecFile spec;
  OwningOpRef<ModuleOp> module = spec.parse(specFile, "attnc");
  if (!module)
    return 1;
  llvm::Error err = explainCmd ? runExplain(*module) : compile(*module, argv[0]);
  if (err) {
    llvm::outs().flush();
    llvm::WithColor::error(llvm::errs(), "attnc") << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
