//===- Emit.cpp - what the backends share to write their stages -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "attnc/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace attnc;
using namespace attnc::emit;

llvm::Error emit::error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error emit::alreadyReported() { return error(""); }

llvm::Error attnc::runPipeline(ModuleOp module, const Selection &selection,
                               PipelineStage until, std::optional<PipelineStage> from) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return error("invalid MLIR pass manager options");
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  // Verifying after every pass was a tenth of the CPU time of a spec of many
  // kernels. The passes are verified one by one where they are tested (attnc-opt
  // in lit, the fuzzers); attnc verifies what its pipeline ends with, which
  // the next step (translation, printing) trusts.
  pm.enableVerifier(selection.verifyEachPass);
  buildPipeline(pm, selection, until, from);
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
  if (!selection.verifyEachPass && failed(verify(module)))
    return error("the " + selection.backend + " pipeline for " + selection.cpu.name +
                 " produced invalid IR (a compiler bug; --verify-each names the pass)");
  return llvm::Error::success();
}

llvm::Error emit::writeText(llvm::StringRef path,
                            llvm::function_ref<void(llvm::raw_ostream &)> fn) {
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    return error(message);
  fn(out->os());
  out->keep();
  return llvm::Error::success();
}

llvm::Error emit::printMlirStage(ModuleOp module, const Selection &selection, EmitStage stage,
                                 const CompileOutput &output) {
  if (stage == EmitStage::spec)
    return writeText(output.path, [&](auto &os) { module.print(os); });
  PipelineStage until = stage == EmitStage::normalized ? PipelineStage::normalized
                        : stage == EmitStage::tiled    ? PipelineStage::tiled
                                                       : PipelineStage::loops;
  if (llvm::Error err = runPipeline(module, selection, until))
    return err;
  return writeText(output.path, [&](auto &os) { module.print(os); });
}

llvm::Error emit::produce(const CompileOutput &output, llvm::function_ref<llvm::Error()> write) {
  return output.produce ? output.produce(output.path, write) : write();
}

/// Runs the C++ compiler attnc was built with (as the linker) on `args`;
/// `what` names the step in the error, which says why when the compiler's
/// own messages (on stderr) do not.
static llvm::Error runCompiler(llvm::ArrayRef<llvm::StringRef> args, const llvm::Twine &what) {
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(ATTNC_CXX_COMPILER, args, std::nullopt, {}, 0, 0, &message);
  if (status == 0)
    return llvm::Error::success();
  if (message.empty())
    message = std::string(ATTNC_CXX_COMPILER) + " exited with status " + std::to_string(status);
  return error(what + " failed: " + message);
}

ObjectParts::~ObjectParts() {
  for (const std::string &part : parts) {
    llvm::sys::fs::remove(part);
    llvm::sys::DontRemoveFileOnSignal(part);
  }
}

llvm::Expected<std::string> ObjectParts::add() {
  llvm::SmallString<128> created;
  if (llvm::sys::fs::createTemporaryFile("attnc-part", "o", created))
    return error("cannot create a temporary object file");
  llvm::sys::RemoveFileOnSignal(created);
  return parts.emplace_back(created.str());
}

/// The C++ compiler's arguments that choose the linker: lld where the build
/// found it (a spec's thousand kernel parts merge in a tenth of GNU ld's time).
static llvm::SmallVector<llvm::StringRef> linkerChoice() {
#ifdef ATTNC_LD_PATH
  return {"--ld-path=" ATTNC_LD_PATH};
#else
  return {};
#endif
}

llvm::Error ObjectParts::merge(llvm::StringRef output, llvm::StringRef triple) const {
  llvm::SmallVector<llvm::StringRef> args{ATTNC_CXX_COMPILER, "-r", "-nostdlib", "-o", output};
  args.append(linkerChoice());
#ifdef ATTNC_LD_PATH
  // Clang and lld merge another architecture's parts (an AArch64 spec of
  // several kernels); GNU ld, the host's only.
  std::string targetFlag = ("--target=" + triple).str();
  args.push_back(targetFlag);
#endif
  args.append(parts.begin(), parts.end());
  args.append(kept.begin(), kept.end());
  return runCompiler(args, "merging objects into " + output);
}

/// Links `object` and the runtime into a shared object.
static llvm::Error linkShared(llvm::StringRef object, llvm::StringRef output,
                              llvm::StringRef installPrefix) {
  llvm::SmallString<256> runtime(installPrefix);
  llvm::sys::path::append(runtime, "lib", "libattnc_runtime.a");
  if (!llvm::sys::fs::exists(runtime))
    return error("cannot find the runtime library at " + runtime);
  llvm::SmallVector<llvm::StringRef> args{ATTNC_CXX_COMPILER, "-shared", "-o", output, object,
                                          runtime, "-lm", "-lpthread"};
  args.append(linkerChoice());
  return runCompiler(args, "linking " + output);
}

/// The header describes the normalized spec: normalizes `spec`, a copy the
/// pipeline did not touch, in place, as the pipeline does.
static llvm::Error writeHeaderFor(ModuleOp spec, const Selection &selection,
                                  llvm::StringRef objPath, llvm::StringRef specFile) {
  PassManager pm(spec->getContext());
  buildPipeline(pm, selection, PipelineStage::normalized);
  if (failed(pm.run(spec)))
    return error("attn-normalize failed");
  llvm::SmallString<256> header(objPath);
  llvm::sys::path::replace_extension(header, ".h");
  return writeText(header, [&](auto &os) { writeHeader(spec, specFile, os); });
}

llvm::Error emit::writeOutputs(llvm::function_ref<llvm::Error(llvm::StringRef)> writeObject,
                               ModuleOp spec, const Selection &selection, EmitStage stage,
                               const CompileOutput &output) {
  if (stage != EmitStage::so) {
    if (llvm::Error err = produce(output, [&] { return writeObject(output.path); }))
      return err;
    return writeHeaderFor(spec, selection, output.path, output.specFile);
  }
  return produce(output, [&]() -> llvm::Error {
    // The object the shared one is linked from is a temporary part (removed at
    // the end), not a name next to the output, whose directory may not exist.
    ObjectParts temporary;
    llvm::Expected<std::string> objPath = temporary.add();
    if (!objPath)
      return objPath.takeError();
    if (llvm::Error err = writeObject(*objPath))
      return err;
    return linkShared(*objPath, output.path, output.installPrefix);
  });
}


std::string emit::variantName(llvm::StringRef name, llvm::StringRef suffix) {
  return suffix.empty() ? name.str() : (name + "." + suffix).str();
}

llvm::Error emit::writeObjectFile(ModuleOp module, const CpuTarget &target, llvm::StringRef path,
                                  llvm::StringRef suffix) {
  llvm::LLVMContext context;
  auto llvmModule = translateAndOptimize(module, target, context);
  if (!llvmModule)
    return llvmModule.takeError();
  if (!suffix.empty())
    for (llvm::GlobalValue &g : (*llvmModule)->global_values())
      if (!g.isDeclaration() && !g.hasLocalLinkage())
        g.setName(variantName(g.getName(), suffix));
  std::string message;
  auto out = openOutputFile(path, &message);
  if (!out)
    return error(message);
  if (llvm::Error err = emitMachineCode(**llvmModule, target, false, out->os()))
    return err;
  out->keep();
  return llvm::Error::success();
}
